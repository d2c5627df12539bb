package jobs

import (
	"strconv"
	"strings"
)

// cronieFields rewrites the day-of-week field of a 5- or 6-field spec so
// that 7 means Sunday, as in cronie and Vixie cron (robfig/cron/v3 accepts
// only 0-6): "7" becomes "0", and a range or step that reaches 7 ("5-7",
// "1-7/2") becomes the list of its days with 7 as 0. Other fields, and
// fields robfig would refuse anyway, are left for robfig to judge.
func cronieFields(body string) string {
	f := strings.Fields(body)
	if len(f) < 5 || len(f) > 6 {
		return body
	}
	last := len(f) - 1
	parts := strings.Split(f[last], ",")
	changed := false
	for i, p := range parts {
		if q, ok := sundaySeven(p); ok {
			parts[i], changed = q, true
		}
	}
	if !changed {
		return body
	}
	f[last] = strings.Join(parts, ",")
	return strings.Join(f, " ")
}

// sundaySeven rewrites one range expression (N, N-M, N/S, N-M/S) whose
// bound is 7; ok is false if it has none, or is malformed. "7/S" is just
// Sunday; "N/S" for other N keeps robfig's meaning (N through 6).
func sundaySeven(expr string) (string, bool) {
	rng, stepText, hasStep := strings.Cut(expr, "/")
	loText, hiText, isRange := strings.Cut(rng, "-")
	lo, err := strconv.Atoi(loText)
	if err != nil {
		return "", false // "*", names, garbage: not ours
	}
	hi := lo
	if isRange {
		if hi, err = strconv.Atoi(hiText); err != nil {
			return "", false
		}
	}
	step := 1
	if hasStep {
		if step, err = strconv.Atoi(stepText); err != nil || step < 1 {
			return "", false
		}
	}
	if lo != 7 && hi != 7 || lo < 0 || lo > hi || hi > 7 { // "7-9": robfig refuses it
		return "", false
	}
	seen := map[int]bool{}
	var days []string
	for d := lo; d <= hi; d += step {
		day := d % 7
		if !seen[day] {
			seen[day] = true
			days = append(days, strconv.Itoa(day))
		}
	}
	return strings.Join(days, ","), true
}
