package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"

	"github.com/lanleader/lanleader/internal/statefile"
	"github.com/lanleader/lanleader/jobs"
)

// openState opens the state file of --state-dir (election.state_dir), or
// returns nil when there is none: the flag is empty, or it was not given
// and DefaultStateDir does not exist or is not writable. A directory that
// was given but cannot be used is a config error.
func openState(s settings, log *slog.Logger) (*statefile.Store, error) {
	if s.StateDir == "" {
		log.Info("no state dir (--state-dir empty): terms, job ledger and run history start cold after a restart")
		return nil, nil
	}
	if !s.StateDirSet {
		if err := writableDir(s.StateDir); err != nil {
			log.Info("no state dir: terms, job ledger and run history start cold after a restart; set --state-dir (election.state_dir)",
				"default", s.StateDir, "reason", err)
			return nil, nil
		}
	}
	st, _, err := statefile.Open(s.StateDir, log)
	if err != nil {
		return nil, ConfigError{fmt.Errorf("--state-dir (election.state_dir) %s: %w", s.StateDir, err)}
	}
	return st, nil
}

// writableDir reports why dir cannot hold the state file, nil if it can.
func writableDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New("not a directory")
	}
	f, err := os.CreateTemp(dir, ".probe*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// statePersister keeps the job runner's ledger and history in the state
// file. Every method is a no-op without a state file.
type statePersister struct {
	store  *statefile.Store
	runner func() *jobs.Runner
	log    *slog.Logger
	// unkept is set while ledgers heard cannot be kept (adopt), so that
	// the failure is logged once, not on every heartbeat.
	unkept *atomic.Bool
}

// adopt hands a ledger heard from node from to the runner and saves it
// (Env.AdoptLedger): on disk before the elector acknowledges it. It
// returns an error when the ledger cannot be kept, because it does not
// decode or the state file cannot be written; the udp elector then
// acknowledges no heartbeat until a ledger is kept again (it passes each
// one again meanwhile). The first failure is logged at ERROR, with the
// file and the cause; the recovery at INFO.
func (p statePersister) adopt(from string, word jobs.HoldWord, b []byte) error {
	err := p.runner().AdoptLedgerFrom(from, word, b)
	if err == nil {
		err = p.saveLedger()
	}
	switch {
	case err != nil && !p.unkept.Swap(true):
		p.log.Error("cannot keep the job ledger heard; in quorum mode this node acknowledges no heartbeat until it can",
			"from", from, "err", err)
	case err == nil && p.unkept.Swap(false):
		p.log.Info("job ledger kept again; acknowledging heartbeats", "from", from)
	}
	return err
}

// restore hands the runner what the state file holds: the ledger (so a
// takeover after a restart knows which instants started before it, which
// fell into the outage, and which runs this node started:
// jobs.Runner.RestoreLedger) and the run history.
func (p statePersister) restore(r *jobs.Runner) {
	if p.store == nil {
		return
	}
	st := p.store.State()
	if len(st.Ledger) > 0 {
		if err := r.RestoreLedger(st.Ledger); err != nil {
			p.log.Warn("state file: job ledger does not decode; starting without it", "file", p.store.Path(), "err", err)
		}
	}
	if len(st.History) > 0 {
		if err := r.History().Restore(st.History); err != nil {
			p.log.Warn("state file: run history does not decode; starting without it", "file", p.store.Path(), "err", err)
		}
	}
}

// saveLedger writes the runner's ledger if it changed, as the node keeps it
// (StateLedger: the runs it started marked as its own, so that the next
// process knows which terms it led; restore gives it back). Called before
// a run starts (through the gate) and after a ledger from a peer is
// adopted, before the elector acknowledges it.
func (p statePersister) saveLedger() error {
	if p.store == nil {
		return nil
	}
	b := p.runner().StateLedger()
	return p.store.Update(func(st *statefile.State) { st.Ledger = b })
}

// saveRun writes the history and ledger (StateLedger, as saveLedger) after
// a run finished.
func (p statePersister) saveRun() {
	if p.store == nil {
		return
	}
	r := p.runner()
	l, h := r.StateLedger(), r.History().Snapshot()
	if err := p.store.Update(func(st *statefile.State) { st.Ledger, st.History = l, h }); err != nil {
		p.log.Error("cannot save the run history", "err", err)
	}
}

// cluster returns the mode's Cluster with a run recorded in the state file
// before the mode's Commit: a run that starts is on this node's disk
// first, so a restart of the whole cluster does not run it again.
func (p statePersister) cluster(next jobs.Cluster) jobs.Cluster {
	if p.store == nil {
		return next
	}
	return savingCluster{Cluster: next, p: p}
}

// savingCluster is a Cluster whose Commit saves the ledger first.
type savingCluster struct {
	jobs.Cluster
	p statePersister
}

func (c savingCluster) Commit(ctx context.Context, name string, e jobs.LedgerEntry) error {
	if err := c.p.saveLedger(); err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	return c.Cluster.Commit(ctx, name, e)
}
