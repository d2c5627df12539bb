package config

import "testing"

func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		full,
		"",
		"jobs: []\n",
		"jobs:\n  - name: a\n    schedule: 'TZ=UTC'\n    shell: x\n",
		"jobs:\n  - &a {name: a, schedule: '@daily', shell: x}\n  - *a\n",
		"election: {priority: 1, preempt: true, peers: [a]}\n",
		"hooks: {on_leader: [x, y], timeout: 1s}\n",
		"a: &x [*x]\n",
		"<<: {jobs: []}\n",
		"jobs:\n  - name: a\n    schedule: 'CRON_TZ=\t@daily'\n    command: [x]\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.yaml", data)
		if err == nil && file == nil {
			t.Fatal("nil file without error")
		}
		if err != nil && file != nil {
			t.Fatal("file with error")
		}
	})
}
