package statefile

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ReplayFileName is the replay file's name inside the state directory. It
// holds the replay table as saved between state file writes (State.Peers
// changes with every packet; the rest rarely): written in place without
// fsync, so a save costs one system call and no disk flush. The state file
// keeps the table as of its own last write; loading takes, per peer, the
// newer of the two. Losing the replay file (a power cut before the kernel
// wrote it back, damage) only falls back to the state file's older table:
// a replay floor, never the election state.
//
// Layout: two slots of equal size (a power of two, at least 4 KiB), each
// holding one record: a header line ("lanleader-replay 1 GEN LENGTH CRC")
// and a JSON body, the rest of the slot ignored. Save GEN goes to slot
// GEN mod 2, so a torn or lost save leaves the previous one readable in
// the other slot; loading takes the valid record with the highest GEN.
const ReplayFileName = "replay"

const (
	replayMagic   = "lanleader-replay"
	replayVersion = 1
	replayLayout  = "VERSION GEN LENGTH CRC"
	minSlot       = 4096
)

// replayBody is a replay record's JSON body.
type replayBody struct {
	Peers []Peer `json:"peers"`
}

// encodeReplay returns the record of save gen.
func encodeReplay(gen uint64, peers []Peer) ([]byte, error) {
	if peers == nil {
		peers = []Peer{}
	}
	body, err := json.Marshal(replayBody{Peers: peers})
	if err != nil {
		return nil, fmt.Errorf("statefile: encode replay table: %w", err)
	}
	return record(fmt.Sprintf("%s %d %d", replayMagic, replayVersion, gen), body), nil
}

// slotFor is the slot size that holds a record of n bytes.
func slotFor(n int) int {
	s := minSlot
	for s < n {
		s *= 2
	}
	return s
}

// decodeReplay parses a replay file: the newest valid record's table, its
// GEN and the file's slot size. err says why no slot holds a valid record;
// torn names a slot that is neither valid nor empty while the other one
// is (what a crash in mid-save leaves).
func decodeReplay(b []byte) (peers []Peer, gen uint64, slot int, torn string, err error) {
	if err := newerFormat(b, replayMagic, replayVersion); err != nil {
		return nil, 0, 0, "", err
	}
	if len(b) < 2*minSlot || len(b)%2 != 0 || len(b) > 2*MaxSize {
		return nil, 0, 0, "", fmt.Errorf("%d bytes, not two slots of at least %d", len(b), minSlot)
	}
	slot = len(b) / 2
	found := false
	var problems []string
	for i := range 2 {
		b := b[i*slot : (i+1)*slot]
		if b[0] == 0 {
			continue // never written
		}
		p, g, err := decodeReplayRecord(b)
		if err == nil && g%2 != uint64(i) {
			err = fmt.Errorf("save %d in slot %d", g, i)
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("slot %d: %v", i, err))
			continue
		}
		if !found || g > gen {
			peers, gen, found = p, g, true
		}
	}
	if !found {
		if len(problems) == 0 {
			return nil, 0, 0, "", errors.New("no save in either slot")
		}
		return nil, 0, 0, "", errors.New(strings.Join(problems, "; "))
	}
	return peers, gen, slot, strings.Join(problems, "; "), nil
}

func decodeReplayRecord(b []byte) ([]Peer, uint64, error) {
	f, body, err := parseRecord(b, replayMagic, replayLayout, false)
	if err != nil {
		return nil, 0, err
	}
	if v, err := strconv.Atoi(string(f[1])); err != nil || v != replayVersion {
		return nil, 0, fmt.Errorf("format version %q, this lanleader reads %d", f[1], replayVersion)
	}
	gen, err := strconv.ParseUint(string(f[2]), 10, 64)
	if err != nil {
		return nil, 0, fmt.Errorf("save number %q", f[2])
	}
	var r replayBody
	if err := decodeJSON(body, &r); err != nil {
		return nil, 0, err
	}
	return r.Peers, gen, nil
}

// mergePeers returns, per peer, the newer floor of a replay file's table
// (newer) and the state file's (older): the higher incarnation, and within
// one incarnation the higher sequence number. Floors only grow, so the
// higher one is the later save's whichever file holds it. Order: newer's
// (most recently heard first), then the peers only older knows.
func mergePeers(newer, older []Peer) []Peer {
	if len(newer) == 0 {
		return older
	}
	out := make([]Peer, 0, len(newer)+len(older))
	at := make(map[string]int, len(newer))
	for _, p := range newer {
		if _, dup := at[p.ID]; dup {
			continue
		}
		at[p.ID] = len(out)
		out = append(out, p)
	}
	for _, p := range older {
		i, ok := at[p.ID]
		switch {
		case !ok:
			at[p.ID] = len(out)
			out = append(out, p)
		case p.Incarnation > out[i].Incarnation || (p.Incarnation == out[i].Incarnation && p.Seq > out[i].Seq):
			out[i] = p
		}
	}
	return out
}
