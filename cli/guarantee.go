package cli

import (
	"errors"
	"fmt"
)

// A udp node says once, at start and in check-config, which guarantee is
// in force — quorum (a side of a partition without a majority runs
// nothing) or none (each side runs the jobs until the partition heals) —
// and /status, the status page and the metric lanleader_quorum_voters
// say the same. Quorum is on whenever the voters are known and there are
// at least three: cluster_size given, or peers listed (this node and the
// other addresses), unless the file says quorum: off.

// Values of election.quorum (--quorum).
const (
	quorumAuto = "auto" // on when the voters are known and at least 3
	quorumOn   = "on"   // on; the voters must be known
	quorumOff  = "off"  // off, whatever the voters
)

// twoServersDoc is where the docs say how to add a witness.
const twoServersDoc = "docs/operations.md#two-servers"

// guarantee is the guarantee a udp node runs with.
type guarantee struct {
	// Quorum is on: a leader needs a majority of Voters.
	Quorum bool
	// Voters is the number of voters when known, 0 when not (broadcast
	// or multicast discovery without cluster_size).
	Voters int
	// Source says where Voters came from: "cluster_size" or "peers".
	Source string
	// Off: the file (or --quorum) says off.
	Off bool
	// Witness: this node is a witness.
	Witness bool
}

// quorumVoters is the protocol's ClusterSize: Voters with quorum, else 0.
func (g guarantee) quorumVoters() int {
	if g.Quorum {
		return g.Voters
	}
	return 0
}

// voterSource describes where the voters came from, for the line.
func (g guarantee) voterSource() string {
	if g.Source == "peers" {
		return fmt.Sprintf("peers: this node and %d listed", g.Voters-1)
	}
	return g.Source
}

// String is the line: what a partition does under this guarantee and,
// without quorum, what to do about it.
func (g guarantee) String() string {
	const both = "a partition runs jobs on both sides until it heals"
	switch {
	case g.Quorum && g.Witness:
		return fmt.Sprintf("quorum: %d voters (%s), this node a witness: it votes and acknowledges, never leads and runs nothing; a minority side runs nothing", g.Voters, g.voterSource())
	case g.Quorum && g.Voters == 2:
		return fmt.Sprintf("quorum: 2 voters (%s); a minority side runs nothing, and either node failing stops the jobs: add a witness (%s)", g.voterSource(), twoServersDoc)
	case g.Quorum:
		return fmt.Sprintf("quorum: %d voters (%s); a minority side runs nothing", g.Voters, g.voterSource())
	case g.Off:
		return "no quorum (quorum: off): " + both
	case g.Voters > 0:
		return fmt.Sprintf("no quorum: %d voters (%s); %s: add a witness (%s)", g.Voters, g.voterSource(), both, twoServersDoc)
	default:
		return fmt.Sprintf("no quorum: broadcast discovery without cluster_size, so the voters are unknown; %s: set cluster_size on every node (with two servers, add a witness: %s)", both, twoServersDoc)
	}
}

// errQuorumNeedsVoters is deriveGuarantee's complaint when quorum is
// asked for and the voters are unknown.
var errQuorumNeedsVoters = errors.New("the number of voters is unknown: set cluster_size (the voters, witnesses included) on every node, or list peers")

// guaranteeProblem is a contradiction deriveGuarantee found, with the key
// it is about.
type guaranteeProblem struct {
	key string
	err error
}

func (p guaranteeProblem) Error() string { return p.err.Error() }

// deriveGuarantee decides the guarantee from cluster_size (0: not given),
// the voters the peers name (this node included; 0: no peers), quorum
// (auto, on, off) and the role.
func deriveGuarantee(clusterSize, peerVoters int, quorum string, witness bool) (guarantee, error) {
	g := guarantee{Witness: witness, Off: quorum == quorumOff}
	switch {
	case clusterSize > 0:
		g.Voters, g.Source = clusterSize, "cluster_size"
	case peerVoters > 0:
		g.Voters, g.Source = peerVoters, "peers"
	}
	switch {
	case g.Off && clusterSize > 0:
		return g, guaranteeProblem{"quorum", fmt.Errorf("off, but cluster_size is %d, which turns quorum on: drop one of them", clusterSize)}
	case g.Off && witness:
		return g, guaranteeProblem{"role", errors.New("witness: a witness only votes, and quorum is off: drop quorum: off, or run this node as a node")}
	case clusterSize > 0 && peerVoters > 0 && clusterSize != peerVoters:
		return g, guaranteeProblem{"cluster_size", fmt.Errorf("%d, but peers name %d voters (this node and %d other addresses): set cluster_size to the number of voters, or leave it out", clusterSize, peerVoters, peerVoters-1)}
	case g.Off:
	case quorum == quorumOn && g.Voters == 0:
		return g, guaranteeProblem{"quorum", fmt.Errorf("on: %w", errQuorumNeedsVoters)}
	case clusterSize > 0 || quorum == quorumOn || g.Voters >= 3:
		g.Quorum = true
	}
	if witness && !g.Quorum {
		return g, guaranteeProblem{"role", fmt.Errorf("witness: a witness only votes, in quorum mode, and %s", guaranteeGap(g))}
	}
	return g, nil
}

// guaranteeGap says why quorum is off, for the witness's error.
func guaranteeGap(g guarantee) string {
	if g.Voters == 0 {
		return errQuorumNeedsVoters.Error()
	}
	return fmt.Sprintf("peers name only %d voters: list the other nodes too (quorum needs 3)", g.Voters)
}
