package etcd

// View is the etcd mode's part of /status.
type View struct {
	// Endpoints are the etcd endpoints the client uses.
	Endpoints []string `json:"endpoints"`
	// Prefix is the cluster's key prefix.
	Prefix string `json:"prefix"`
	// SessionTTLSeconds is the lease TTL.
	SessionTTLSeconds float64 `json:"session_ttl_seconds"`
	// LeaderKey is this node's leader key while it leads.
	LeaderKey string `json:"leader_key,omitempty"`
	// LeaseRemainingSeconds is, while leading, how long the lease is
	// certainly alive by the local clock (with the margin taken off).
	LeaseRemainingSeconds float64 `json:"lease_remaining_seconds,omitempty"`
	// CanAct is CanActAsLeader.
	CanAct bool `json:"can_act"`
}

// View returns the mode's status view.
func (e *Elector) View() View {
	v := View{Endpoints: e.endpoints(), Prefix: e.cfg.Prefix, SessionTTLSeconds: e.cfg.SessionTTL.Seconds()}
	e.mu.Lock()
	l := e.lead
	e.mu.Unlock()
	if l != nil {
		r := l.lease.remaining()
		v.LeaderKey, v.LeaseRemainingSeconds, v.CanAct = l.key, max(r, 0).Seconds(), r > 0
	}
	return v
}
