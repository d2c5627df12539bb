// Command simfigures prints the UDP election's simulator figures (failover,
// resign, heal, start-up storm, flapping under loss) as reported in
// docs/benchmarks.md. Every figure comes from seeded simulations, so the
// output is the same on every machine.
//
//	go run ./election/udp/udptest/cmd/simfigures -seeds 1000 -days 5
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lanleader/lanleader/election/udp/protocol"
	"github.com/lanleader/lanleader/election/udp/udptest"
)

func main() {
	seeds := flag.Int("seeds", 1000, "seeded runs per timing figure")
	stormSeeds := flag.Int("storm-seeds", 100, "seeded 50-node start-up storms")
	days := flag.Float64("days", 2, "simulated days per flapping figure")
	only := flag.String("only", "", "run only: failover, kill, resign, heal, storm, lossy, quorum, flap")
	flag.Float64Var(&target, "target", target, "LossTarget for the adaptive detector")
	flag.IntVar(&maxMisses, "max-misses", maxMisses, "MaxMisses for the adaptive detector")
	flag.StringVar(&variants, "variants", "", "flap: run only these variants, comma-separated (fixed, adaptive, quorum, quorum-3, quorum-witness, quorum-long)")
	flag.Parse()
	if err := run(*seeds, *stormSeeds, *days, *only); err != nil {
		fmt.Fprintln(os.Stderr, "simfigures:", err)
		os.Exit(1)
	}
}

var (
	target    = protocol.DefaultLANConfig().LossTarget
	maxMisses = protocol.DefaultLANConfig().MaxMisses
	variants  string
)

// flapVariant is one row group of the flapping table.
type flapVariant struct {
	key, name        string
	c                protocol.Config
	nodes, witnesses int
}

// flapVariants are the flapping table's configurations, at 200 ms.
func flapVariants() []flapVariant {
	quorum := func(size, promiseMisses int) protocol.Config {
		c := cfg(200*time.Millisecond, false)
		c.ClusterSize, c.PromiseMisses = size, promiseMisses
		return c
	}
	return []flapVariant{
		{"fixed", "5 nodes, fixed Misses 3", cfg(200*time.Millisecond, true), 5, 0},
		{"adaptive", "5 nodes, adaptive Misses 3..10 (default)", cfg(200*time.Millisecond, false), 5, 0},
		{"quorum", "quorum, 5 nodes", quorum(5, 0), 5, 0},
		{"quorum-3", "quorum, 3 nodes", quorum(3, 0), 3, 0},
		{"quorum-witness", "quorum, 2 nodes + a witness", quorum(3, 0), 3, 1},
		{"quorum-long", "quorum, 5 nodes, PromiseMisses 10", quorum(5, 10), 5, 0},
	}
}

func cfg(interval time.Duration, fixed bool) protocol.Config {
	c := protocol.DefaultLANConfig()
	c.Interval = interval
	c.LossTarget = target
	c.MaxMisses = maxMisses
	if fixed {
		c.MaxMisses = c.Misses
	}
	return c
}

func pct(ds []time.Duration) string {
	return fmt.Sprintf("p50 %v  p90 %v  p99 %v  max %v",
		udptest.Percentile(ds, 50).Round(time.Millisecond/10), udptest.Percentile(ds, 90).Round(time.Millisecond/10),
		udptest.Percentile(ds, 99).Round(time.Millisecond/10), udptest.Percentile(ds, 100).Round(time.Millisecond/10))
}

func run(seeds, stormSeeds int, days float64, only string) error {
	link := udptest.LAN
	intervals := []time.Duration{200 * time.Millisecond, 100 * time.Millisecond, 50 * time.Millisecond}
	failoverIntervals := append([]time.Duration{time.Second}, intervals...)
	if only == "" || only == "failover" {
		fmt.Println("## Failover after leader crash (3 nodes, loss-free LAN 0.2±0.1 ms, Misses 3, ClaimWindow 10 ms, BackoffMax Interval/2)")
		for _, iv := range failoverIntervals {
			c := cfg(iv, false)
			var ds []time.Duration
			for s := range seeds {
				d, err := udptest.Failover(c, 3, link, uint64(s+1))
				if err != nil {
					return fmt.Errorf("failover interval %v seed %d: %w", iv, s+1, err)
				}
				ds = append(ds, d)
			}
			fmt.Printf("interval %-6v %s  (bound %v)\n", iv, pct(ds), udptest.FailoverBound(c, link.MaxDelay()))
		}
	}
	if only == "" || only == "kill" {
		fmt.Println("\n## Failover after the leader's process is killed, host up (probes answered by port unreachable)")
		for _, nodes := range []int{3, 5} {
			for _, iv := range intervals {
				c := cfg(iv, false)
				var ds []time.Duration
				var cand, maxCand uint64
				for s := range seeds {
					d, k, err := udptest.FailoverKill(c, nodes, link, uint64(s+1))
					if err != nil {
						return fmt.Errorf("kill %d nodes interval %v seed %d: %w", nodes, iv, s+1, err)
					}
					ds = append(ds, d)
					cand += k
					maxCand = max(maxCand, k)
				}
				fmt.Printf("%d nodes interval %-6v %s  candidacies mean %.2f max %d\n", nodes, iv, pct(ds), float64(cand)/float64(seeds), maxCand)
			}
		}
	}
	if only == "" || only == "resign" {
		fmt.Println("\n## New leader after graceful resign (5 nodes)")
		for _, iv := range intervals {
			c := cfg(iv, false)
			var ds []time.Duration
			for s := range seeds {
				d, err := udptest.Resign(c, 5, link, uint64(s+1))
				if err != nil {
					return fmt.Errorf("resign interval %v seed %d: %w", iv, s+1, err)
				}
				ds = append(ds, d)
			}
			fmt.Printf("interval %-6v %s  (bound %v)\n", iv, pct(ds), udptest.ResignBound(c, link.MaxDelay()))
		}
	}
	if only == "" || only == "heal" {
		fmt.Println("\n## Healed partition (5 nodes split at random), from first packet crossing")
		for _, iv := range intervals {
			c := cfg(iv, false)
			var one, all []time.Duration
			for s := range seeds {
				r, err := udptest.Heal(c, 5, link, uint64(s+1))
				if err != nil {
					return fmt.Errorf("heal interval %v seed %d: %w", iv, s+1, err)
				}
				one, all = append(one, r.OneLeader), append(all, r.Agreed)
			}
			fmt.Printf("interval %-6v one leader: %s\n", iv, pct(one))
			fmt.Printf("interval %-6v all agree:  %s  (bound 2×interval = %v)\n", iv, pct(all), 2*iv)
		}
	}
	if only == "" || only == "storm" {
		for _, spread := range []time.Duration{200 * time.Millisecond, time.Millisecond} {
			fmt.Printf("\n## Start-up storm: 50 nodes, equal priority, started within %v (interval 200 ms)\n", spread)
			var conv []time.Duration
			var cand, claims, leads, maxCand uint64
			for s := range stormSeeds {
				r, err := udptest.Storm(cfg(200*time.Millisecond, false), 50, spread, link, uint64(s+1))
				if err != nil {
					return fmt.Errorf("storm seed %d: %w", s+1, err)
				}
				conv = append(conv, r.Converge)
				cand += r.Candidacies
				claims += r.Claims
				leads += uint64(r.Leaderships)
				maxCand = max(maxCand, r.Candidacies)
			}
			n := float64(stormSeeds)
			fmt.Printf("runs %d: candidacies/election mean %.2f max %d; CLAIM messages mean %.2f (up to 2 per candidacy: one retransmit); leaderships mean %.2f\n",
				stormSeeds, float64(cand)/n, maxCand, float64(claims)/n, float64(leads)/n)
			fmt.Printf("convergence after last start: %s\n", pct(conv))
		}
	}
	if only == "" || only == "lossy" {
		fmt.Println("\n## Failover after leader crash under loss (200 ms, adaptive, after 10 min warm-up)")
		for _, v := range []struct {
			name                     string
			nodes, voters, witnesses int
		}{{"5 nodes, no quorum", 5, 0, 0}, {"5 nodes, quorum", 5, 5, 0}, {"3 nodes, quorum", 3, 3, 0}, {"2 nodes + a witness", 3, 3, 1}} {
			c := cfg(200*time.Millisecond, false)
			c.ClusterSize = v.voters
			for _, loss := range []float64{0.01, 0.05, 0.20} {
				var ds []time.Duration
				var ks []int
				for s := range max(seeds/10, 10) {
					d, k, err := udptest.FailoverLossy(c, v.nodes, v.witnesses, loss, 10*time.Minute, uint64(s+1))
					if err != nil {
						return fmt.Errorf("lossy failover %s loss %v seed %d: %w", v.name, loss, s+1, err)
					}
					ds, ks = append(ds, d), append(ks, k)
				}
				fmt.Printf("%-19s loss %2.0f%%: %s  (survivor threshold %d..%d intervals)\n", v.name, loss*100, pct(ds), slices.Min(ks), slices.Max(ks))
			}
		}
	}
	if only == "" || only == "quorum" {
		fmt.Println("\n## Quorum mode (ClusterSize = nodes), loss-free, 200 ms")
		for _, n := range []int{3, 5, -5} {
			c := cfg(200*time.Millisecond, false)
			label := ""
			if n < 0 {
				n = -n
				c.PromiseMisses = 10
				label = " (PromiseMisses 10)"
			}
			c.ClusterSize = n
			var fo, rs []time.Duration
			for s := range seeds {
				d, err := udptest.Failover(c, n, link, uint64(s+1))
				if err != nil {
					return fmt.Errorf("quorum failover n=%d seed %d: %w", n, s+1, err)
				}
				fo = append(fo, d)
				d, err = udptest.Resign(c, n, link, uint64(s+1))
				if err != nil {
					return fmt.Errorf("quorum resign n=%d seed %d: %w", n, s+1, err)
				}
				rs = append(rs, d)
			}
			fmt.Printf("%d nodes%s: crash failover %s\n", n, label, pct(fo))
			fmt.Printf("%d nodes%s: resign         %s\n", n, label, pct(rs))
		}
		for _, n := range []int{3, 7} {
			for _, quorum := range []bool{false, true} {
				c := cfg(200*time.Millisecond, false)
				label := "no quorum"
				if quorum {
					c.ClusterSize, label = n, "quorum"
				}
				var fo []time.Duration
				var claims []time.Duration // counts, in a Duration slice for Percentile
				for s := range seeds {
					d, k, err := udptest.FailoverClaims(c, n, link, uint64(s+1))
					if err != nil {
						return fmt.Errorf("failover claims n=%d seed %d: %w", n, s+1, err)
					}
					fo = append(fo, d)
					claims = append(claims, time.Duration(k))
				}
				fmt.Printf("%d nodes, %-9s: crash failover p50 %v p90 %v; claims per election p50 %d p90 %d max %d\n", n, label,
					udptest.Percentile(fo, 50).Round(time.Millisecond/10), udptest.Percentile(fo, 90).Round(time.Millisecond/10),
					udptest.Percentile(claims, 50), udptest.Percentile(claims, 90), udptest.Percentile(claims, 100))
			}
		}
	}
	if only == "" || only == "flap" {
		d := time.Duration(days * float64(24*time.Hour))
		fmt.Printf("\n## Flapping: healthy leader, random loss per delivery, %.1f simulated days each\n", days)
		for _, v := range flapVariants() {
			if variants != "" && !slices.Contains(strings.Split(variants, ","), v.key) {
				continue
			}
			for _, loss := range []float64{0.01, 0.05, 0.20} {
				r, err := udptest.Flapping(v.c, v.nodes, v.witnesses, loss, d, 1)
				if err != nil {
					return fmt.Errorf("flapping %s loss %v: %w", v.key, loss, err)
				}
				fmt.Printf("%-40s loss %2.0f%%: %7.2f leader changes/day  (%d in %v; suspicions %d, claims %d, leases lost %d, lease retries %d; follower threshold %d intervals)\n",
					v.name, loss*100, r.PerDay(), r.LeaderChanges, d, r.Suspicions, r.Claims, r.LeasesLost, r.LeaseRetries, r.MaxMisses)
			}
		}
	}
	return nil
}
