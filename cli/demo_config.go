package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/lanleader/lanleader/election/udp/wire"
)

// demoJobs is the demo cluster's config: one job every second, on the
// second, so each scheduled instant is a whole second and a duplicate would
// be plain to see. Its output names the node, the term (the fencing token)
// and the instant it was scheduled for.
const demoJobs = `# Written by "lanleader demo"; removed when the demo ends.
jobs:
  - name: tick
    schedule: "* * * * * *"
    shell: echo "$LANLEADER_NODE term $LANLEADER_TERM ran $LANLEADER_SCHEDULED_AT"
    timeout: 5s
`

// demoJobEvery is how often demoJobs' job is due.
const demoJobEvery = time.Second

// demoCluster is the demo's cluster name, so that its packets are ignored
// by a real cluster (and the other way round) even on the same ports.
const demoCluster = "lanleader-demo"

// writeDemoFiles writes the job config and a fresh HMAC key (the demo runs
// authenticated, as a real cluster should) into dir.
func writeDemoFiles(dir string) (configPath, keyPath string, err error) {
	configPath = filepath.Join(dir, "demo.yaml")
	if err := os.WriteFile(configPath, []byte(demoJobs), 0o600); err != nil {
		return "", "", fmt.Errorf("write config: %w", err)
	}
	keyPath = filepath.Join(dir, "demo.key")
	if err := wire.WriteKeyFile(keyPath, "lanleader demo key, removed when the demo ends", -1); err != nil {
		return "", "", fmt.Errorf("write key: %w", err)
	}
	return configPath, keyPath, nil
}
