package doctor

import (
	"fmt"
	"strings"
)

// pcieBoards are words of device names that mark a GPU without NVLink
// between boards as sold in PCIe form (GeForce, workstation and inference
// cards, "-PCIE" data-centre variants); SXM parts and NVLink-bridged pairs
// show NVL paths in the log instead.
var pcieBoards = []string{"geforce", "rtx", "titan", "quadro", "pcie", "tesla m", "tesla k", "tesla t4", " l4", " l20", " l40", " a10", " a16", " a2", " t4"}

// p2pOverPCIe says why the log's GPUs look connected by PCIe only: the
// device names, a P2P connection with no NVLink path, or PCIe graph types.
func (d *diagnoser) p2pOverPCIe() (string, []LineRef, bool) {
	s := d.s
	for _, p := range s.Paths {
		if strings.HasPrefix(p.Type, "NV") {
			return "", nil, false
		}
	}
	for _, g := range s.Graphs {
		if strings.HasPrefix(g.TypeIntra, "NV") {
			return "", nil, false
		}
	}
	if r := s.NCCLTests; r != nil {
		for _, name := range r.Devices {
			low := " " + strings.ToLower(name)
			for _, w := range pcieBoards {
				if strings.Contains(low, w) {
					return "the devices are " + name + " boards", nil, true
				}
			}
		}
	}
	for _, g := range s.Graphs {
		switch g.TypeIntra {
		case "PIX", "PXB", "PHB", "NODE", "SYS":
			return "the intra-node graph runs over " + g.TypeIntra, []LineRef{g.Line}, true
		}
	}
	return "", nil, false
}

// p2pHang: the run stops without an error on GPUs that talk over PCIe
// inside one host, the signature of peer-to-peer traffic that PCIe ACS or
// the IOMMU redirects and loses.
func (d *diagnoser) p2pHang() (Diagnosis, bool) {
	s := d.s
	if s.NNodes > 1 || len(s.Hosts) > 1 {
		return Diagnosis{}, false
	}
	if v, _, ok := d.setting("NCCL_P2P_DISABLE"); ok && isOne(v) {
		return Diagnosis{}, false
	}
	if d.otherFailure() || !s.testFailure.Empty() {
		// An error explains the stop (a GPU newer than NCCL, an
		// allocation failure...): it is not a silent P2P hang.
		return Diagnosis{}, false
	}
	var ev evidence
	stop := ""
	switch r := s.NCCLTests; {
	case r != nil && r.Rows == 0 && !r.Finished:
		stop = "The benchmark started and the log ends before its first result (if the run hung there, the first collective never finished)"
		if r.HeaderLine > 0 {
			ev.add(LineRef{Line: r.HeaderLine, Text: "(column header of the nccl-tests table)"})
		}
	case r != nil && r.Rows > 0 && !r.Finished && r.MaxBytes > 0 && r.LastBytes < r.MaxBytes && s.Warnings.Count == 0:
		stop = fmt.Sprintf("The benchmark stops after %d result rows, at %d bytes of the %d asked for, without an error", r.Rows, r.LastBytes, r.MaxBytes)
		ev.add(LineRef{Line: r.LastRow, Text: "(last nccl-tests result row)"})
	case r != nil && r.WrongRows > 0:
		stop = fmt.Sprintf("%d result row(s) report wrong elements: data arrived corrupted", r.WrongRows)
	default:
		for _, t := range s.Timeouts {
			if t.SeqNum >= 0 && t.SeqNum <= 1 {
				stop = fmt.Sprintf("The very first collective (#%d %s) timed out", t.SeqNum, t.OpType)
				ev.add(d.timeoutLine(t))
				break
			}
		}
	}
	if stop == "" {
		return Diagnosis{}, false
	}
	why, refs, ok := d.p2pOverPCIe()
	if !ok {
		return Diagnosis{}, false
	}
	ev.add(refs...)
	ev.add(d.firstTransport("P2P"))
	expl := stop + ", and " + why + " (GPU-to-GPU traffic over PCIe inside one host). That is the signature of peer-to-peer PCIe transfers that never arrive: PCIe ACS on the switches or root ports, or the IOMMU (Intel VT-d, AMD-Vi), redirects them through the root complex, where they are blocked or lost; some boards and BIOS versions do it too. " +
		"Fix: disable ACS (in the BIOS, or `sudo setpci -s BDF ECAP_ACS+0x6.w=0000` for each bridge, again after every reboot) and turn the IOMMU off or to passthrough (`intel_iommu=off`, `amd_iommu=off` or `iommu=pt` on the kernel command line); update the BIOS. Use NCCL_P2P_DISABLE=1 as a test, not a fix: if the run then completes, P2P was the culprit, but SHM through host memory carries the traffic at a fraction of the bandwidth. " +
		"Check: `sudo lspci -vvv | grep ACSCtl` (SrcValid+ means ACS is on), `cat /proc/cmdline`, `dmesg | grep -i -e DMAR -e AMD-Vi`, and the CUDA sample p2pBandwidthLatencyTest or `nvidia-smi topo -p2p r`."
	return Diagnosis{ID: "p2p-pcie-hang", Severity: Error, Title: "P2P over PCIe hangs (ACS or IOMMU)",
		Explanation: expl, Evidence: ev.list(), Links: links(linkP2P, linkTroubleshoot, envLink("NCCL_P2P_DISABLE"), envLink("NCCL_P2P_LEVEL"))}, true
}

// otherFailure reports whether the log shows an error of its own: a line
// rule hit, an NCCL error PyTorch raised, or an NCCL warning that is not
// about the network fallback.
func (d *diagnoser) otherFailure() bool {
	s := d.s
	if len(s.ruleHits) > 0 || !s.NCCLErrors.Empty() {
		return true
	}
	cue := map[int]bool{}
	for _, e := range s.netCues {
		for _, l := range e.Lines {
			cue[l.Line] = true
		}
	}
	for _, l := range s.Warnings.Lines {
		if !cue[l.Line] {
			return true
		}
	}
	return false
}

// benchResult summarises an nccl-tests table and names the command that
// sets it against the model's expectation for the system.
func (d *diagnoser) benchResult() (Diagnosis, bool) {
	r := d.s.NCCLTests
	if r == nil || r.Rows == 0 {
		return Diagnosis{}, false
	}
	var b strings.Builder
	b.WriteString("nccl-tests")
	if r.Collective != "" {
		b.WriteString(" " + r.Collective)
	}
	if r.NRanks > 0 {
		fmt.Fprintf(&b, " on %d ranks", r.NRanks)
	}
	if len(r.Devices) > 0 {
		b.WriteString(" (" + r.Devices[0] + ")")
	}
	fmt.Fprintf(&b, ": %d result rows", r.Rows)
	if r.PeakBusBwGBps > 0 {
		fmt.Fprintf(&b, ", peak bus bandwidth %.2f GB/s at %s", r.PeakBusBwGBps, humanBytes(r.PeakBytes))
	}
	b.WriteString(".")
	sev := Info
	if r.WrongRows > 0 {
		sev = Warning
		fmt.Fprintf(&b, " %d row(s) report wrong elements: the results were corrupted in transit (on PCIe P2P most often the IOMMU or ACS; on networks a NIC or GPUDirect RDMA problem); rerun with NCCL_P2P_DISABLE=1 or NCCL_NET_GDR_LEVEL=0 to isolate it.", r.WrongRows)
	}
	ls := links(linkPCIe4090, linkChannels, linkTroubleshoot)
	if r.EstimatorURL != "" {
		b.WriteString(" The estimator page (link below) opens with this run's collective, peak size and node count: choose the built-in system with these GPUs there, or paste the node's topology (NCCL_TOPO_DUMP_FILE), to read the bus bandwidth NCCL's model and the calibrated estimate expect, and paste this table in its box to compare every size; in a terminal `ncclsim doctor` names the closest built-in system with those numbers and `ncclsim compare SYSTEM --nccl-tests FILE` compares the table.")
		ls = append([]Link{{Title: "Estimator with this run's settings", URL: r.EstimatorURL}}, ls...)
	}
	return Diagnosis{ID: "nccl-tests-result", Severity: sev, Title: "nccl-tests results",
		Explanation: b.String(), Evidence: []LineRef{{Line: r.LastRow, Text: "(last nccl-tests result row)"}},
		Links: ls}, true
}

// AddSystem adds to the nccl-tests diagnosis of ds what a caller that
// carries the presets and the estimator found for run.System: the preset,
// its link and the model's expectation (ahead of the unproven mark).
func AddSystem(ds []Diagnosis, run *NCCLTestsRun) {
	sys := run.System
	if sys == nil {
		return
	}
	text := " The built-in system closest to this log is " + sys.Title + " (preset " + sys.Preset
	if !sys.Exact {
		text += "; the same GPU model, but not the same GPU count or number of hosts, so treat its numbers as a bound"
	}
	text += "); `" + sys.CompareCommand + "` sets every size of the table against it." + expectationText(run)
	for i := range ds {
		if ds[i].ID != "nccl-tests-result" {
			continue
		}
		if head, ok := strings.CutSuffix(ds[i].Explanation, unprovenNote); ok {
			ds[i].Explanation = head + text + unprovenNote
		} else {
			ds[i].Explanation += text
		}
		ds[i].Links = append([]Link{{Title: "Estimator: " + sys.Title, URL: sys.EstimatorURL}}, ds[i].Links...)
	}
}

// expectationText is the sentence run.System.Expected gives the
// nccl-tests diagnosis, "" when it is nil.
func expectationText(run *NCCLTestsRun) string {
	sys := run.System
	e := sys.Expected
	if e == nil {
		return ""
	}
	s := fmt.Sprintf(" On it NCCL's model expects %.1f GB/s bus bandwidth at %s (%s/%s) and the calibrated estimate %.1f GB/s", e.ModelBusBwGBps, humanBytes(run.PeakBytes), e.Algo, e.Proto, e.CalibratedBusBwGBps)
	if e.HighGBps != nil {
		s += fmt.Sprintf(" (published runs of this class fall between %.1f and %.1f GB/s)", e.LowGBps, *e.HighGBps)
	} else if e.LowGBps > 0 {
		s += fmt.Sprintf(" (published runs of this class reach at least %.1f GB/s)", e.LowGBps)
	}
	s += fmt.Sprintf("; this run's peak %.1f GB/s is %.0f%% of the estimate", e.MeasuredGBps, 100*e.Ratio)
	switch {
	case e.LowGBps > 0 && e.MeasuredGBps < e.LowGBps:
		s += ", below what published runs of this system class reach: compare the transports in the log (P2P, SHM, NET, GDRDMA) and the channel count with what the preset gets"
		if !sys.Exact {
			s += ", keeping in mind that the preset is not the same machine"
		}
		s += "."
	case e.HighGBps != nil && e.MeasuredGBps > *e.HighGBps:
		s += ", above the published range: the preset is likely slower than this machine."
	case e.LowGBps > 0:
		s += ", inside the range of published runs."
	default:
		s += "."
	}
	return s
}

// humanBytes prints a message size the way nccl-tests users read it.
func humanBytes(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
