package jobs_test

import (
	"context"
	"log/slog"
	"os/signal"
	"syscall"
	"time"

	"github.com/lanleader/lanleader/config"
	"github.com/lanleader/lanleader/election"
	"github.com/lanleader/lanleader/hooks"
	"github.com/lanleader/lanleader/jobs"
)

// Example shows the wiring the CLI does: config file → runner and hooks →
// one Elector's callbacks → orderly shutdown.
func Example() {
	file, err := config.Load("/etc/lanleader.yaml")
	if err != nil {
		slog.Error("config", "err", err) // names file, line, key, reason
		return
	}
	var elector election.Elector // static or env; for udp use udpjobs.Cluster(udpElector)
	// below, with udp.Config.Payload = runner.Ledger and udp.Config.OnPayload =
	// runner.AdoptLedgerFrom (see docs/jobs.md).
	if elector == nil {
		return
	}

	runner, err := jobs.NewRunner(jobs.Alone(elector), jobs.RunnerConfig{Jobs: file.Jobs, Node: "nas", Logger: slog.Default()})
	if err != nil {
		return
	}
	hc := file.Hooks
	hc.Node = "nas"
	hk := hooks.New(hc, slog.Default())

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	_ = elector.Run(ctx, election.Combine(runner.Callbacks(), hk.Callbacks()))

	// Leadership has ended: cancel-policy runs are being stopped; give
	// finish-policy runs and the hooks a bounded time.
	shutdown, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = runner.Wait(shutdown)
	_ = hk.Stop(shutdown)
}
