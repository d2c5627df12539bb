package config

import (
	"fmt"
	"io/fs"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rewrite is a file that reads as each of its versions in turn, then as
// the last one for good: a file rewritten while it is read. It counts the
// reads and checks they are SettleGap apart.
type rewrite struct {
	t        *testing.T
	versions []string
	reads    int
	last     time.Time
}

func (r *rewrite) read(string) ([]byte, error) {
	if r.reads > 0 {
		assert.GreaterOrEqual(r.t, time.Since(r.last), SettleGap, "two reads less than SettleGap apart")
	}
	r.last = time.Now()
	v := r.versions[min(r.reads, len(r.versions)-1)]
	r.reads++
	if v == "" {
		return nil, &fs.PathError{Op: "open", Path: "l.yaml", Err: fs.ErrNotExist}
	}
	return []byte(v), nil
}

const (
	fullFile = `jobs:
  - name: clean
    schedule: "0 3 * * *"
    shell: rm -rf /var/tmp/staging/old-builds
  - name: backup
    schedule: "0 2 * * *"
    shell: /usr/local/bin/backup
`
	// cutFile is fullFile cut mid-way through the shell line: still valid
	// YAML, with another command and one job missing.
	cutFile = `jobs:
  - name: clean
    schedule: "0 3 * * *"
    shell: rm -rf /var
`
)

// TestLoadReadsUntilTwoReadsAgree: a file rewritten while it is read
// (cut short, missing, then whole) is taken as it stands once two reads
// SettleGap apart agree, never half-written; one that keeps changing is
// refused with an error that says how to write it.
func TestLoadReadsUntilTwoReadsAgree(t *testing.T) {
	cases := []struct {
		name      string
		versions  []string
		wantReads int
	}{
		{"unchanged", []string{fullFile}, 2},
		{"cut, then whole", []string{cutFile, fullFile}, 3},
		{"cut twice in different places, then whole", []string{"jobs:\n", cutFile, fullFile}, 4},
		{"missing (replaced by rm and a new write), then whole", []string{"", fullFile}, 3},
		{"whole, cut while rewritten, whole again", []string{fullFile, cutFile, fullFile}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := &rewrite{t: t, versions: c.versions}
				f, err := LoadWith("l.yaml", Options{ReadFile: r.read})
				require.NoError(t, err)
				require.Len(t, f.Jobs, 2, "a job missing: the file was taken half-written")
				assert.Equal(t, "rm -rf /var/tmp/staging/old-builds", f.Jobs[0].Shell)
				assert.Equal(t, c.wantReads, f.Reads)
				assert.Equal(t, c.wantReads, r.reads)
			})
		})
	}

	t.Run("never settles", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := &rewrite{t: t}
			for i := range SettleReads + 5 {
				r.versions = append(r.versions, fmt.Sprintf("%s# version %d\n", fullFile, i))
			}
			_, err := LoadWith("l.yaml", Options{ReadFile: r.read})
			require.Error(t, err)
			assert.Equal(t, fmt.Sprintf("l.yaml: still changing after %d reads 100ms apart: write it elsewhere and rename it into place (mv), which replaces it at once", SettleReads), err.Error())
			assert.Equal(t, SettleReads, r.reads, "reads are bounded")
		})
	})

	t.Run("missing for good", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			r := &rewrite{t: t, versions: []string{""}}
			_, err := LoadWith("l.yaml", Options{ReadFile: r.read})
			require.ErrorIs(t, err, fs.ErrNotExist)
			assert.Equal(t, 2, r.reads)
		})
	})
}
