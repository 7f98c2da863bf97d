package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The day load's rate through Postfix is read against the stack alone's,
// and the two mean the same only when both keep the machine as busy: a
// system whose commands come in waves leaves the stack idle between them,
// and its rate is then bound by its loop, not by what each delivery costs
// the stack. So each window is measured with the machine's CPU time too,
// as /proc/stat counts it for all its CPUs.

// cpuTimes is the machine's CPU time so far, in clock ticks: busy (user,
// nice, system, irq, softirq, steal) and all of it (busy, idle, iowait).
type cpuTimes struct{ busy, total uint64 }

// readCPUTimes reads /proc/stat; ok is false where there is none.
func readCPUTimes() (t cpuTimes, ok bool) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return cpuTimes{}, false
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return cpuTimes{}, false
	}
	t, err = parseCPUTimes(line)
	return t, err == nil
}

// parseCPUTimes reads the first line of /proc/stat, "cpu  user nice system
// idle iowait irq softirq steal guest guest_nice"; guest time is counted
// in user already, and the fields after steal are left out.
func parseCPUTimes(line string) (cpuTimes, error) {
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return cpuTimes{}, fmt.Errorf("not the machine's cpu line: %q", line)
	}
	var t cpuTimes
	for i, s := range f[1:min(len(f), 9)] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cpuTimes{}, fmt.Errorf("cpu field %d: %w", i+1, err)
		}
		t.total += v
		if i != 3 && i != 4 { // idle, iowait
			t.busy += v
		}
	}
	return t, nil
}

// busyShare is the share of the machine's CPU time that was busy between
// a and b, from 0 to 1; 0 when either is unknown or no time passed.
func busyShare(a, b cpuTimes) float64 {
	if b.total <= a.total || b.busy < a.busy {
		return 0
	}
	return float64(b.busy-a.busy) / float64(b.total-a.total)
}

// machineWindow measures the machine's busy share from its start to each
// call of share.
type machineWindow struct {
	start cpuTimes
	ok    bool
}

func startMachineWindow() machineWindow {
	t, ok := readCPUTimes()
	return machineWindow{start: t, ok: ok}
}

func (w machineWindow) share() float64 {
	end, ok := readCPUTimes()
	if !w.ok || !ok {
		return 0
	}
	return busyShare(w.start, end)
}

// userHZ is the unit of /proc/stat's times: USER_HZ, 100 a second on
// every Linux the bench runs on.
const userHZ = 100

// busyNanos is the machine's busy CPU time from the window's start, in
// nanoseconds, summed over its CPUs; 0 when unknown.
func (w machineWindow) busyNanos() float64 {
	end, ok := readCPUTimes()
	if !w.ok || !ok || end.busy < w.start.busy {
		return 0
	}
	return float64(end.busy-w.start.busy) * float64(time.Second) / userHZ
}

// percent shows a share of 0 to 1; 0 is unknown.
func percent(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", v*100)
}
