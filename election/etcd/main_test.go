package etcd

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lanleader/lanleader/jobs"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/lanleader/lanleader/election/etcd/etcdtest"
)

// server is the one etcd all tests of this package share; each test uses
// its own key prefix.
var server *etcdtest.Server

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(jobHelper())
	}
	dir, err := os.MkdirTemp("", "lanleader-etcd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server, err = etcdtest.Start(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	server.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

// helperEnv, when set, makes the test binary a job's process instead of a
// test run (TestRunModeRecordsBeforeStart runs it as a job): it checks that
// its run's ledger entry is in etcd and appends what it found to the file
// named by the variable.
const helperEnv = "LANLEADER_ETCD_TEST_JOB_OUT"

// lockEnv, when set with helperEnv, makes the job helper a run that must
// never overlap another (lockHelper).
const lockEnv = "LANLEADER_ETCD_TEST_LOCK"

// lockHelper is a run (or a service's copy) that takes an exclusive lock
// on the file named by lockEnv, so that two runs going at once are seen:
// without the lock it appends "instant node term overlap" to the output
// file and exits; with it, "instant node term locked", and then it runs
// for a minute ignoring SIGTERM, as a job that traps it would (SIGKILL
// ends it, and the kernel releases the lock). A copy's instant is its
// service's ledger name.
func lockHelper() int {
	f, err := os.OpenFile(os.Getenv(lockEnv), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	signal.Ignore(syscall.SIGTERM)
	verdict := "locked"
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		verdict = "overlap"
	}
	term, _ := strconv.ParseUint(os.Getenv("LANLEADER_TERM"), 10, 64)
	instant := os.Getenv("LANLEADER_SCHEDULED_AT")
	if svc := os.Getenv("LANLEADER_SERVICE"); svc != "" {
		instant = jobs.ServiceLedgerName(svc) // a service's copy: no instant
	}
	if err := appendRun(instant, term, verdict); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if verdict == "locked" {
		time.Sleep(time.Minute)
	}
	return 0
}

// appendRun appends "instant node term verdict" to the helper's output
// file.
func appendRun(instant string, term uint64, verdict string) error {
	f, err := os.OpenFile(os.Getenv(helperEnv), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "%s %s %d %s\n", instant, os.Getenv("LANLEADER_NODE"), term, verdict)
	return err
}

// jobHelper reads LANLEADER_JOB's ledger entry at LANLEADER_ETCD_ENDPOINT
// under LANLEADER_ETCD_PREFIX and appends "instant node term verdict" to
// the output file; verdict is "recorded" if the entry names this run
// (instant and term) as running, else what it found.
func jobHelper() int {
	if os.Getenv(lockEnv) != "" {
		return lockHelper()
	}
	instant, err := time.Parse(time.RFC3339, os.Getenv("LANLEADER_SCHEDULED_AT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	term, _ := strconv.ParseUint(os.Getenv("LANLEADER_TERM"), 10, 64)
	verdict := "missing"
	client, err := etcdtest.NewClient(os.Getenv("LANLEADER_ETCD_ENDPOINT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := os.Getenv("LANLEADER_ETCD_PREFIX") + "/ledger/" + os.Getenv("LANLEADER_JOB")
	resp, err := client.Get(ctx, key)
	switch {
	case err != nil:
		verdict = "error:" + strings.ReplaceAll(err.Error(), " ", "_")
	case len(resp.Kvs) == 1:
		l, err := jobs.DecodeLedger(resp.Kvs[0].Value)
		if err != nil || len(l.Entries) != 1 {
			verdict = "undecodable"
			break
		}
		e := l.Entries[0]
		if e.Instant.Equal(instant) && e.Term == term && e.Outcome == jobs.OutcomeRunning {
			verdict = "recorded"
		} else {
			verdict = fmt.Sprintf("other:%s/%d/%s", e.Instant.Format(time.RFC3339), e.Term, e.Outcome)
		}
	}
	if err := appendRun(instant.Format(time.RFC3339), term, verdict); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}
