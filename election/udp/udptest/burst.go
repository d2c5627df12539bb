package udptest

// GilbertElliott is bursty loss: each directed link is in a good or a bad
// state, switching with the given probabilities at every delivery, and
// loses deliveries with the state's loss probability. Real LANs lose
// packets in bursts (a switch buffer overflowing, Wi-Fi interference), which
// independent loss underestimates: several heartbeats in a row go missing.
type GilbertElliott struct {
	// GoodToBad and BadToGood are the per-delivery transition
	// probabilities. The mean burst is 1/BadToGood deliveries long.
	GoodToBad, BadToGood float64
	// LossGood and LossBad are the loss probabilities in each state.
	LossGood, LossBad float64
}

// MeanLoss is the long-run loss probability.
func (g GilbertElliott) MeanLoss() float64 {
	if g.GoodToBad+g.BadToGood == 0 {
		return g.LossGood
	}
	bad := g.GoodToBad / (g.GoodToBad + g.BadToGood)
	return bad*g.LossBad + (1-bad)*g.LossGood
}

// lost decides one delivery from → to: the plain Loss probability, or the
// Gilbert–Elliott state of that directed link when Link.Burst is set.
func (s *Sim) lost(from, to string) bool {
	g := s.link.Burst
	if g == nil {
		return s.rng.Float64() < s.link.Loss
	}
	if s.burstBad == nil {
		s.burstBad = map[[2]string]bool{}
	}
	k := [2]string{from, to}
	bad := s.burstBad[k]
	if bad {
		bad = s.rng.Float64() >= g.BadToGood
	} else {
		bad = s.rng.Float64() < g.GoodToBad
	}
	s.burstBad[k] = bad
	p := g.LossGood
	if bad {
		p = g.LossBad
	}
	return s.rng.Float64() < p
}
