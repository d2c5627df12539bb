package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// releaseStartupPages unmaps from this process the pages of its own
// executable that it never wrote (its code and read-only data), so that
// what stays resident is what the running node touches again.
//
// Start-up touches code and data all over the binary: every package's
// init, flag and config parsing, the Prometheus registry, cobra. The
// kernel maps each page fault's neighbours too (fault-around, 64 KiB), so
// after start-up about 12 of the 14 MiB of a static binary were resident
// and counted in the process's RSS, although an idle node touches about
// 3 MiB of them (/proc/PID/clear_refs, then smaps' Referenced). The pages
// stay in the page cache: this only drops this process's mappings, and
// whatever runs later faults its pages back in from there.
//
// Only mappings without private (copy-on-write) pages are dropped: in a
// position-independent binary the loader writes relocations into some
// read-only segments, and MADV_DONTNEED would throw those writes away. It
// returns the bytes unmapped.
func releaseStartupPages() (int, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	released := 0
	var start, end uint64
	candidate := false
	sc := bufio.NewScanner(bytes.NewReader(smaps))
	for sc.Scan() {
		line := sc.Text()
		if r, ok := mappingRange(line); ok {
			fields := strings.Fields(line)
			start, end = r[0], r[1]
			candidate = len(fields) >= 6 && !strings.Contains(fields[1], "w") && strings.HasSuffix(line, " "+exe)
			continue
		}
		if !candidate || !strings.HasPrefix(line, "Anonymous:") {
			continue
		}
		candidate = false
		if f := strings.Fields(line); len(f) < 2 || f[1] != "0" {
			continue // written pages (relocations): keep the mapping
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), unix.MADV_DONTNEED); errno != 0 {
			return released, fmt.Errorf("madvise %x-%x: %w", start, end, errno)
		}
		released += int(end - start)
	}
	return released, sc.Err()
}

// mappingRange parses the address range that starts a mapping's block in
// /proc/PID/smaps ("00400000-00a71000 r-xp ...").
func mappingRange(line string) ([2]uint64, bool) {
	rng, _, ok := strings.Cut(line, " ")
	if !ok {
		return [2]uint64{}, false
	}
	lo, hi, ok := strings.Cut(rng, "-")
	if !ok {
		return [2]uint64{}, false
	}
	a, err1 := strconv.ParseUint(lo, 16, 64)
	b, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || b <= a {
		return [2]uint64{}, false
	}
	return [2]uint64{a, b}, true
}
