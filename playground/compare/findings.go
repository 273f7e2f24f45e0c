package compare

import (
	"context"
	"fmt"
	"math"

	"github.com/distributed-nav/distributed-nav/playground/estimate"
	"github.com/distributed-nav/distributed-nav/playground/tune"
)

// Pages the findings link to (site-relative; the anchors are headings of
// content/notes, checked by TestLinksExist).
var (
	linkP2POff    = Link{"P2P silently disabled", "/notes/troubleshooting/#p2p-silently-disabled"}
	linkSHM       = Link{"SHM transport on RTX 4090", "/notes/troubleshooting/#shm-transport"}
	linkNIC       = Link{"NIC on the wrong socket, or NET/Socket instead of InfiniBand", "/notes/troubleshooting/#nic-wrong-socket"}
	linkGDR       = Link{"GPU–NIC affinity and GPUDirect RDMA", "/notes/hardware/#gpu-nic-affinity"}
	linkXSocket   = Link{"The cross-socket rule", "/notes/hardware/#rtx-4090-cross-socket"}
	linkTopology  = Link{"The topology pipeline: XML, paths, trim", "/notes/nccl-internals-architecture-deep-dive/#topology-pipeline"}
	linkTransport = Link{"Transport selection order", "/notes/nccl-internals-architecture-deep-dive/#transport-selection"}
)

// Doctor rules the findings point to (ids of `ncclsim doctor` diagnoses,
// checked by TestDoctorRulesExist).
const (
	ruleP2P      = "p2p-unavailable"
	ruleNoGDR    = "no-gdrdma"
	ruleNICSock  = "nic-wrong-socket"
	ruleNetSock  = "net-socket"
	farBelowNIC  = 0.5 // a plateau below this fraction of the model's is "far below"
	logCloserMin = 0.0 // how much closer (in ln) the other hypothesis must be
)

// plateauBand is the median band over the plateau rows (high = +Inf when
// unbounded).
func plateauBand(rows []Row) (lo, hi float64) {
	p := plateauRows(rows)
	lo = median(column(p, func(r Row) float64 { return r.BandLow }))
	hi = median(column(p, func(r Row) float64 {
		if r.BandHigh == nil {
			return math.Inf(1)
		}
		return *r.BandHigh
	}))
	return lo, hi
}

// altPlateau is the median calibrated busbw over the plateau rows of the
// system modelled with extra variables, and its class.
func altPlateau(ctx context.Context, res *Result, build Builder, extra map[string]string, f tune.Func, dt tune.Datatype) (float64, estimate.Class, error) {
	env := map[string]string{}
	for k, v := range res.Env {
		env[k] = v
	}
	for k, v := range extra {
		env[k] = v
	}
	sys, err := build(ctx, env)
	if err != nil {
		return 0, "", err
	}
	var v []float64
	var cl estimate.Class
	for _, r := range plateauRows(res.Rows) {
		e, err := sys.Estimate(tune.Request{Func: f, NBytes: r.Bytes, Datatype: dt})
		if err != nil {
			return 0, "", err
		}
		v = append(v, e.Calibrated.BusBwGBps)
		cl = e.Calibrated.Class
	}
	return median(v), cl, nil
}

// dist is how far apart two bandwidths are, on a log scale.
func dist(a, b float64) float64 {
	if a <= 0 || b <= 0 {
		return math.Inf(1)
	}
	return math.Abs(math.Log(a / b))
}

func gb(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f GB/s", v)
	case v >= 10:
		return fmt.Sprintf("%.1f GB/s", v)
	}
	return fmt.Sprintf("%.2f GB/s", v)
}

// findings reads the plateau against the band and, when it falls outside,
// against the system under the hypothesis that explains it.
func findings(ctx context.Context, res *Result, build Builder, f tune.Func, dt tune.Datatype) ([]Finding, error) {
	s := res.Summary
	if s.PlateauMeasured <= 0 {
		return []Finding{{ID: "no-plateau", Severity: "info", Title: "No large sizes in the table",
			Text: fmt.Sprintf("The table has no size of %d MiB or more with a measured busbw, so it says nothing about the bandwidth the system reaches; run nccl-tests up to at least 256 MiB (-e 256M).", PlateauMinBytes>>20)}}, nil
	}
	P, C, M := s.PlateauMeasured, s.PlateauCalibrated, s.PlateauModel
	lo, hi := plateauBand(res.Rows)
	cls := res.Class
	switch {
	case P >= lo && P <= hi:
		return []Finding{{ID: "agrees", Severity: "info", Title: "The run agrees with the estimate",
			Text: fmt.Sprintf("The measured plateau, %s busbw, lies within the calibrated estimate's band (%s–%s) for the %s path class (%s).", gb(P), gb(lo), bandHigh(hi), cls, cls.Describe())}}, nil
	case P > hi:
		// Through host memory, a run far faster than SHM runs may have
		// used P2P: NCCL's default P2P level (paths.cc: PXB, SYS on AMD
		// hosts with at most two GPUs) keeps GPUs behind a host bridge
		// or across the sockets on SHM, while an older release, a
		// P2P-capable driver or an NCCL_P2P_LEVEL where the job ran may
		// have let it use P2P. The system with P2P allowed everywhere
		// (NCCL_P2P_LEVEL=SYS) is the hypothesis; it holds when that
		// estimate is on another path and nearer the run.
		if (cls == estimate.ClassSHM || cls == estimate.ClassSHMXSocket) && res.NNodes == 1 && res.Env["NCCL_P2P_LEVEL"] != "SYS" {
			S, scls, err := altPlateau(ctx, res, build, map[string]string{"NCCL_P2P_LEVEL": "SYS"}, f, dt)
			if err != nil {
				return nil, fmt.Errorf("compare: model the system with P2P at every level: %w", err)
			}
			if scls != cls && dist(P, S)+logCloserMin < dist(P, C) {
				return []Finding{{ID: "looks-like-p2p", Severity: "info", Title: "Looks like P2P: faster than host memory",
					Text:        fmt.Sprintf("The measured plateau, %s busbw, is far above the %s estimate of %s (band %s–%s) and near what this system reaches with P2P (%s, the calibrated estimate with NCCL_P2P_LEVEL=SYS, class %s). Looks like the run used P2P where NCCL's default P2P level, as modelled, keeps these GPUs on SHM (PXB by default, SYS only on AMD hosts of at most two GPUs): an older NCCL, NCCL_P2P_LEVEL set where the job ran, or a P2P-capable driver. Set the variable the job used (NCCL_P2P_LEVEL=SYS here) to compare with the path it took; the 'via P2P' or 'via SHM' channel lines of NCCL_DEBUG=INFO say which it was.", gb(P), cls, gb(C), gb(lo), bandHigh(hi), gb(S), scls),
					DoctorRules: []string{ruleP2P}, Links: []Link{linkTransport, linkP2POff}}}, nil
			}
		}
		return []Finding{{ID: "faster-than-modelled", Severity: "warning", Title: "Faster than the system modelled",
			Text:  fmt.Sprintf("The measured plateau, %s busbw, is above the calibrated estimate's band (%s–%s) for the %s class: the machine likely has a faster path than the topology describes (P2P or NVLink that the topology lacks, more NICs, or fewer GPUs sharing a link). Model the machine it ran on: dump its topology with NCCL_TOPO_DUMP_FILE and pass it as the system.", gb(P), gb(lo), bandHigh(hi), cls),
			Links: []Link{linkTopology}}}, nil
	}
	// Below the band.
	var out []Finding
	switch cls {
	case estimate.ClassNVLink, estimate.ClassNVLinkDirect, estimate.ClassPCIe, estimate.ClassPCIeXSocket:
		if res.NNodes == 1 {
			S, scls, err := altPlateau(ctx, res, build, map[string]string{"NCCL_P2P_DISABLE": "1"}, f, dt)
			if err != nil {
				return nil, fmt.Errorf("compare: model the system without P2P: %w", err)
			}
			if dist(P, S)+logCloserMin < dist(P, C) {
				out = append(out, Finding{ID: "looks-like-shm", Severity: "warning", Title: "Looks like SHM: P2P is not in use",
					Text:        fmt.Sprintf("The measured plateau, %s busbw, is near what this system reaches through host memory (%s, the calibrated estimate with NCCL_P2P_DISABLE=1, class %s) and far below the %s estimate of %s. Looks like SHM, P2P is not in use: the driver may report no P2P between these GPUs (consumer GPUs, IOMMU or ACS on, a VM), or NCCL_P2P_DISABLE / NCCL_P2P_LEVEL is set where the job runs. Run once with NCCL_DEBUG=INFO: the 'Channel 00 : 0[0] -> 1[1] via ...' lines say SHM or P2P, and `ncclsim doctor` reads them.", gb(P), gb(S), scls, cls, gb(C)),
					DoctorRules: []string{ruleP2P}, Links: []Link{linkP2POff, linkSHM, linkTransport}})
				return out, nil
			}
		}
	case estimate.ClassNetRDMA, estimate.ClassNetHost, estimate.ClassNetTCP:
		if P < farBelowNIC*M {
			text := fmt.Sprintf("The measured plateau, %s busbw, is far below what NCCL's model derives from the NICs' line rate (%s) and below the calibrated band (%s–%s). Check GDR / the NIC's PCIe placement: whether GPUDirect RDMA is in use (the 'via NET/IB/0/GDRDMA' lines of NCCL_DEBUG=INFO; the nvidia-peermem module), whether each GPU's NIC sits under its own PCIe switch or across the CPU sockets, and that the job uses the InfiniBand/RoCE NICs rather than NET/Socket.", gb(P), gb(M), gb(lo), bandHigh(hi))
			if G, _, err := altPlateau(ctx, res, build, map[string]string{"NCCL_NET_GDR_LEVEL": "LOC"}, f, dt); err == nil && dist(P, G) < dist(P, C) && math.Abs(G-C) > 0.1*C {
				text += fmt.Sprintf(" The run is closer to this system's estimate without GPUDirect RDMA (%s, NCCL_NET_GDR_LEVEL=LOC) than to the one with it.", gb(G))
			}
			out = append(out, Finding{ID: "far-below-nic", Severity: "warning", Title: "Far below the NIC line rate",
				Text: text, DoctorRules: []string{ruleNoGDR, ruleNICSock, ruleNetSock}, Links: []Link{linkGDR, linkNIC}})
			return out, nil
		}
	case estimate.ClassSHM, estimate.ClassSHMXSocket:
		out = append(out, Finding{ID: "slow-shm", Severity: "warning", Title: "Slower than SHM usually runs on such a system",
			Text:  fmt.Sprintf("The measured plateau, %s busbw, is below the calibrated band (%s–%s) of the %s class (%s). Through host memory the bandwidth depends on where the GPUs and the proxy threads sit: check the CPU and memory binding of the processes (numactl, the affinity NCCL reports), whether the GPUs are on different sockets, and in containers the size of /dev/shm.", gb(P), gb(lo), bandHigh(hi), cls, cls.Describe()),
			Links: []Link{linkSHM, linkXSocket}})
		return out, nil
	}
	out = append(out, Finding{ID: "below-band", Severity: "warning", Title: "Slower than the estimate",
		Text:  fmt.Sprintf("The measured plateau, %s busbw, is below the calibrated estimate's band (%s–%s) for the %s class (%s), and no modelled alternative (P2P off, GPUDirect RDMA off) explains it better. Check that the topology is the machine's (NCCL_TOPO_DUMP_FILE) and read an NCCL_DEBUG=INFO log of the run with `ncclsim doctor`.", gb(P), gb(lo), bandHigh(hi), cls, cls.Describe()),
		Links: []Link{linkTopology, linkTransport}})
	return out, nil
}

func bandHigh(hi float64) string {
	if math.IsInf(hi, 1) {
		return "unbounded"
	}
	return gb(hi)
}
