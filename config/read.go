package config

import (
	"bytes"
	"fmt"
	"time"
)

// A config file is read until two reads SettleGap apart agree, at most
// SettleReads times. A file written in place (an editor's save, `cat >`,
// a script that appends line by line) can be read half-written, and YAML
// cut at a line boundary is still valid YAML: the jobs after the cut would
// count as removed and their runs be cancelled, and a `shell:` line cut
// short is another valid command (`rm -rf /var` from `rm -rf
// /var/tmp/staging/old-builds`). Writing the file elsewhere and renaming
// it into place (mv) replaces it at once and never needs a second read to
// agree.
const (
	// SettleGap is how long apart two reads that must agree are.
	SettleGap = 100 * time.Millisecond
	// SettleReads bounds the reads of one load: a file still changing after
	// that many is refused.
	SettleReads = 10
)

// readSettled reads path with read until two reads SettleGap apart return
// the same bytes (or fail the same way), and returns the last with the
// number of reads it took: 2 when the file did not change.
func readSettled(path string, read func(string) ([]byte, error)) ([]byte, int, error) {
	data, err := read(path)
	for n := 2; n <= SettleReads; n++ {
		time.Sleep(SettleGap)
		again, againErr := read(path)
		if sameRead(data, err, again, againErr) {
			return again, n, againErr
		}
		data, err = again, againErr
	}
	return nil, SettleReads, fmt.Errorf("%s: still changing after %d reads %v apart: write it elsewhere and rename it into place (mv), which replaces it at once",
		path, SettleReads, SettleGap)
}

// sameRead reports whether two reads agree: the same bytes, or the same
// error (a file missing both times).
func sameRead(a []byte, errA error, b []byte, errB error) bool {
	if errA != nil || errB != nil {
		return errA != nil && errB != nil && errA.Error() == errB.Error()
	}
	return bytes.Equal(a, b)
}
