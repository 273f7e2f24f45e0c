package tune

import (
	"fmt"
	"math"

	"github.com/distributed-nav/distributed-nav/playground/topo"
)

// Model is a tuned communicator: the tables ncclTopoTuneModel leaves in
// struct ncclComm plus the scalars the enqueue-time selection reads. Build
// it with NewModel; it is read-only afterwards.
type Model struct {
	Sys    System
	Graphs Graphs // as the model saw them (ring and tree aligned, unsearched graphs zeroed)
	Opts   Options
	Consts Constants // after the POWER-CPU adjustment

	// Bandwidths are algorithm bandwidths in GB/s (bytes of the user buffer
	// per ns); 0 marks an unusable cell. Latencies are in µs.
	Bandwidths [NumFuncs][NumAlgorithms][NumProtocols]float32
	Latencies  [NumFuncs][NumAlgorithms][NumProtocols]float32
	// Computed marks the cells ncclTopoTuneModel filled in (the others keep
	// the zeros of the freshly allocated communicator).
	Computed [NumFuncs][NumAlgorithms][NumProtocols]bool

	MaxThreads       [NumAlgorithms][NumProtocols]int
	ThreadThresholds [NumAlgorithms][NumProtocols]int64

	// ParsedAlgo/ParsedProto are the enable matrices right after
	// NCCL_ALGO/NCCL_PROTO (what NCCL prints in its NCCL_ENV matrix);
	// AlgoEnable is after the built-in disables.
	ParsedAlgo  AlgoEnable
	ParsedProto ProtoEnable
	AlgoEnable  AlgoEnable
	// ProtoUsed is the protocol enable after the LL128 auto rule, per
	// function, algorithm and protocol (the rule looks at each algorithm's
	// graph).
	ProtoUsed [NumFuncs][NumAlgorithms][NumProtocols]bool

	IntraHW, HW [NumAlgorithms]HW

	CommNChannels int  // comm->nChannels
	NVLSChannels  int  // comm->nvlsChannels
	NVLSSupport   bool // comm->nvlsSupport after the graph check
	CollNetEnable bool // config.collnetEnable after the graph check
	PatEnabled    bool // ncclPatEnable()
	NetOverheadUs float32
}

// f32 rounds a double to float as a C assignment to a float does.
func f32(x float64) float32 { return float32(x) }

// NewModel runs ncclTopoTuneModel
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L243-L618)
// for the communicator sys with the searched graphs g and the environment
// opts (the zero Options means DefaultOptions). Before that it applies the
// init-time adjustments of
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/init.cc#L1452-L1459: no
// CollNet without a CollNetChain graph, no NVLS without an NVLS graph, and
// ring and tree share the smaller channel count. Graphs that NCCL would not
// search (CollNet when disabled, NVLS when unsupported) are zeroed.
func NewModel(sys System, g Graphs, opts Options) (*Model, error) {
	if opts == (Options{}) {
		opts = DefaultOptions()
	}
	if err := sys.validate(); err != nil {
		return nil, err
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	for _, ng := range []struct {
		name string
		g    Graph
	}{{"ring", g.Ring}, {"tree", g.Tree}, {"collnet-direct", g.CollNetDirect}, {"collnet-chain", g.CollNetChain}, {"nvls", g.NVLS}} {
		if err := ng.g.validate(ng.name); err != nil {
			return nil, err
		}
	}
	if g.Ring.NChannels < 1 || g.Tree.NChannels < 1 {
		return nil, fmt.Errorf("tune: ring and tree graphs need at least one channel (got %d, %d)", g.Ring.NChannels, g.Tree.NChannels)
	}
	parsedAlgo, parsedProto, err := opts.enables()
	if err != nil {
		return nil, err
	}

	m := &Model{Sys: sys, Opts: opts, ParsedAlgo: parsedAlgo, ParsedProto: parsedProto}
	if opts.Constants != nil {
		m.Consts = *opts.Constants
	} else {
		m.Consts = DefaultConstants()
	}

	// init.cc: graphs NCCL does not search stay zeroed; CollNet and NVLS
	// turn off without a graph; ring and tree agree on channels.
	m.CollNetEnable = sys.CollNetEnable
	if !m.CollNetEnable {
		g.CollNetChain, g.CollNetDirect = Graph{}, Graph{}
	}
	if g.CollNetChain.NChannels == 0 {
		m.CollNetEnable = false
	}
	m.NVLSSupport = sys.NVLSSupport
	if !m.NVLSSupport {
		g.NVLS = Graph{}
	}
	if g.NVLS.NChannels == 0 {
		m.NVLSSupport = false
	}
	n := min(g.Ring.NChannels, g.Tree.NChannels)
	g.Ring.NChannels, g.Tree.NChannels = n, n
	m.Graphs = g
	m.NVLSChannels = NVLSChannels(sys, m.NVLSSupport, opts)
	m.CommNChannels = CommChannels(sys, g, opts, m.CollNetEnable)

	m.setMaxThreads()
	if sys.NRanks <= 1 {
		// tuning.cc:261 returns before any table or threshold is filled.
		m.AlgoEnable = parsedAlgo
		return m, nil
	}
	m.fillTables()
	m.applyEnables()
	m.setThreadThresholds()
	return m, nil
}

// getNthreads validates NCCL_NTHREADS-style values
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L17-L34).
func getNthreads(env int64, lo, hi, def int) int {
	nt := int(int32(env)) // the int64 parameter is passed as an int
	if nt <= 0 {
		return def
	}
	switch {
	case nt%WarpSize != 0:
		return hi
	case nt > hi:
		return hi
	case nt < lo:
		return lo
	}
	return nt
}

// setMaxThreads is tuning.cc:244-257.
func (m *Model) setMaxThreads() {
	r := m.Graphs.Ring
	simpleDefault := SimpleMaxNThreads
	if float64(float32(r.BwIntra)*float32(r.NChannels)) <= PCIBw {
		simpleDefault = 256
	}
	o := m.Opts
	m.MaxThreads[Ring][Simple] = getNthreads(o.NThreads, 2*WarpSize, SimpleMaxNThreads, simpleDefault)
	m.MaxThreads[Tree][Simple] = getNthreads(o.NThreads, 2*WarpSize, SimpleMaxNThreads, SimpleMaxNThreads)
	for _, a := range []Algorithm{CollNetDirect, CollNetChain, NVLS, NVLSTree} {
		m.MaxThreads[a][Simple] = MaxNThreads
	}
	ll := getNthreads(o.NThreads, 2*WarpSize, LLMaxNThreads, LLMaxNThreads)
	m.MaxThreads[Ring][LL], m.MaxThreads[Tree][LL] = ll, ll
	ll128 := getNthreads(o.LL128NThreads, LL128MaxNThreads/4, LL128MaxNThreads, LL128MaxNThreads)
	m.MaxThreads[Ring][LL128], m.MaxThreads[Tree][LL128] = ll128, ll128
}

// patEnable is ncclPatEnable
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L215-L223).
func (m *Model) patEnable() bool {
	if m.Sys.MinCompCap < 60 {
		return false
	}
	if v := m.Opts.PatEnable; v != 2 {
		return int(int32(v)) != 0
	}
	return m.Sys.NNodes == m.Sys.NRanks && m.Sys.NetDeviceType == NetDeviceHost
}

// netOverhead is getNetOverhead in µs
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L225-L233).
func (m *Model) netOverhead() float32 {
	if m.Opts.NetOverhead != Unset {
		return f32(float64(m.Opts.NetOverhead) * .001)
	}
	if m.Sys.CPUArch == ArchX86 && m.Sys.CPUVendor == VendorAMD {
		return 2.0
	}
	return 1.0
}

// fillTables computes every latency and bandwidth cell
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L259-L438).
func (m *Model) fillTables() {
	s := m.Sys
	c := &m.Consts
	nNodes, nRanks := s.NNodes, s.NRanks
	cc := CompCapIndex(s.MinCompCap)
	idx2 := ScaleIndex(nNodes)
	idx1 := cc
	if nNodes > 1 {
		idx1 = 0
		if s.CPUVendor == VendorAMD || s.CPUVendor == VendorMixed {
			idx1 = 1
		}
	}
	llMaxBw := c.LLMaxBws[idx1][idx2]
	perChMaxTreeBw := c.PerChMaxTreeBws[cc][idx2]
	perChMaxRingLL128Bw := c.PerChMaxRingLL128Bws[cc][idx2]
	perChMaxTreeLL128Bw := c.PerChMaxTreeLL128Bws[cc][idx2]
	perChMaxNVLSTreeBw := c.PerChMaxNVLSTreeBws[cc][idx2]
	if s.CPUArch == ArchPower {
		c.HWLatencies[HWPCI][Tree][Simple] = c.HWLatencies[HWPCI][Ring][Simple]
	}
	ppn := float32(nRanks) / float32(nNodes)
	ppnInt := nRanks / nNodes
	for a := Algorithm(0); a < NumAlgorithms; a++ {
		m.IntraHW[a] = HWPCI
		if m.Graphs.For(a).TypeIntra == topo.PathNVL {
			m.IntraHW[a] = HWNVLink
		}
		m.HW[a] = m.IntraHW[a]
		if nNodes > 1 {
			m.HW[a] = HWNet
		}
	}
	m.PatEnabled = m.patEnable()
	m.NetOverheadUs = m.netOverhead()
	maxTreePattern := s.MaxTreePattern
	if maxTreePattern == PatternNone {
		maxTreePattern = m.Graphs.Tree.Pattern
	}
	localRanks := s.localRanks()

	for coll := Func(0); coll < NumFuncs; coll++ {
		var nsteps int
		switch coll {
		case AllReduce:
			nsteps = 2 * (nRanks - 1)
		case ReduceScatter, AllGather:
			nsteps = nRanks - 1
		default:
			nsteps = nRanks
		}
		agrs := coll == AllGather || coll == ReduceScatter
		for a := Algorithm(0); a < NumAlgorithms; a++ {
			g := m.Graphs.For(a)
			for p := Protocol(0); p < NumProtocols; p++ {
				if !computed(coll, a, p) {
					continue
				}
				if agrs && a == PAT && !m.PatEnabled {
					continue
				}
				collnet := a == CollNetDirect || a == CollNetChain
				var bw float32
				if nNodes <= 2 || collnet {
					bw = float32(g.BwIntra)
				} else {
					bw = float32(g.BwInter)
				}
				if a == NVLS || a == NVLSTree {
					if g.NChannels < 2 {
						continue
					}
					intraBw := float32(float32(g.BwIntra) * nvlsEfficiency[cc])
					intraBw = float32(intraBw * float32(g.NChannels-1))
					intraBw = intraBw / float32(g.NChannels)
					if coll == AllReduce {
						intraBw = float32(intraBw * 2)
					} else {
						intraBw = float32(intraBw * ((ppn - 1) / ppn))
					}
					mult := float32(1)
					if nNodes <= 2 && a == NVLSTree {
						mult = 2
					}
					interBw := float32(float32(g.BwInter) * mult)
					bw = min(intraBw, interBw)
					if a == NVLSTree {
						bw = min(bw, float32(perChMaxNVLSTreeBw))
					}
				}
				nch := g.NChannels
				busBw := float32(float32(nch) * bw)

				// Refinements, tuning.cc:326-374.
				if a == Ring && p == LL {
					busBw = f32(math.Min(llMaxBw, float64(busBw)*.5))
				}
				if a == Ring && p == LL128 {
					busBw = f32(math.Min(float64(busBw)*0.92, float64(nch)*perChMaxRingLL128Bw))
				}
				if a == Tree && coll == AllReduce {
					busBw = f32(math.Min(float64(busBw)*.92, float64(nch)*perChMaxTreeBw))
				}
				if a == Tree && p == LL {
					busBw = f32(math.Min(float64(busBw)*1.0/3.8, llMaxBw))
				}
				if a == Tree && p == LL128 {
					f := 120.0 / 128.0
					if nNodes == 1 {
						f = 7.0 / 9.0
					}
					busBw = f32(math.Min(float64(busBw)*f, float64(nch)*perChMaxTreeLL128Bw))
				}
				if a == Tree && maxTreePattern == PatternTree {
					busBw = f32(float64(busBw) * .85)
				}
				if a == PAT {
					busBw = f32(float64(busBw) * .75)
				}
				if collnet && p != Simple {
					busBw = 0
				}
				if a == CollNetDirect && p == Simple {
					if agrs {
						busBw = float32(ppn * min(float32(g.BwIntra), float32(float32(g.BwInter)*0.9)))
					} else {
						factor := f32(float64(ppn) / (1.0 * float64(nch)))
						factor -= (factor - 1) / 2
						busBw /= factor
						if s.MinCompCap >= 90 {
							busBw = f32(float64(busBw) * .85)
						}
					}
				}
				if (a == NVLS || a == CollNetDirect) && p == Simple && agrs && nNodes > 1 {
					nHeads := 0
					if coll == AllGather && !s.CollNetAllGather {
						busBw = 0
					}
					if coll == ReduceScatter && !s.CollNetReduceScatter {
						busBw = 0
					}
					if m.CollNetEnable {
						nHeads = s.CollNetHeadsNum
					} else {
						busBw = 0
					}
					if busBw > 0 {
						for _, l := range localRanks {
							if l > nHeads {
								busBw = 0
								break
							}
						}
					}
				}

				// Bus bandwidth to algorithm bandwidth, tuning.cc:376-382.
				if !(a != Ring && agrs) {
					ratio := float32(1)
					if a == Ring || a == NVLS || a == NVLSTree {
						ratio = f32(float64(ratio) * ((1.0 * float64(nRanks)) / float64(nsteps)))
					} else {
						ratio = f32(float64(ratio) * .5)
					}
					busBw = float32(busBw * ratio)
				}
				m.Bandwidths[coll][a][p] = busBw
				m.Computed[coll][a][p] = true

				// Latency, tuning.cc:384-435.
				lat := f32(c.BaseLatencies[a][p])
				intraLat := f32(c.HWLatencies[m.IntraHW[a]][a][p])
				var interLat float32
				if ppn == 1 {
					interLat = f32(c.HWLatencies[HWNet][Tree][p])
				} else {
					interLat = f32(c.HWLatencies[HWNet][a][p])
				}
				interLat += float32(g.LatencyInter)
				if p == Simple {
					interLat += float32(g.LatencyInter)
				}
				switch a {
				case Ring:
					hwLat := f32(c.HWLatencies[m.HW[a]][a][p])
					if coll == Reduce || coll == Broadcast {
						if g.SameChannels {
							lat += hwLat
						} else {
							if p == Simple {
								hwLat = f32(c.HWLatencies[m.HW[a]][Tree][p])
							}
							lat += float32(float32(nsteps) * hwLat)
						}
					} else {
						var netOverhead float32
						if nNodes > 1 {
							netOverhead = m.NetOverheadUs
							if p == Simple {
								netOverhead = float32(netOverhead * 3)
							}
						}
						intraLat = max(intraLat, netOverhead)
						nInterSteps := 0
						if nNodes > 1 {
							if coll == AllReduce {
								nInterSteps = 2 * (nNodes - 1)
							} else {
								nInterSteps = nNodes - 1
							}
						}
						lat += float32(float32(float32(nsteps-nInterSteps)*intraLat) + float32(float32(nInterSteps)*interLat))
					}
				case Tree:
					if coll == AllReduce {
						inner := float32(float32(float32(ppnInt-1)*intraLat) + float32(float32(log2i(uint64(nNodes)))*interLat))
						lat += float32(2 * inner)
					}
				case CollNetDirect:
					lat = f32(float64(lat) + (2*(float64(float32(float32(min(1, ppnInt-1))*intraLat))+float64(ppnInt-1)*0.4) + float64(interLat)))
				case CollNetChain:
					lat += float32(float32(float32(2*(ppnInt-1))*intraLat) + interLat)
				case NVLS:
					lat = intraLat
					if nNodes > 1 {
						lat += interLat
					}
				case NVLSTree:
					lat += float32(intraLat + float32(float32(2*log2i(uint64(nNodes)))*interLat))
				case PAT:
					if agrs {
						lat = f32(float64(lat) + (float64(log2i(uint64(nNodes)))*(float64(interLat)/3.5) + float64(nRanks)*2.8))
					}
				}
				m.Latencies[coll][a][p] = lat
			}
		}
	}
}

// applyEnables runs the built-in disables and the LL128 auto rule and zeroes
// the bandwidth of disabled cells
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/tuning.cc#L495-L541).
func (m *Model) applyEnables() {
	s := m.Sys
	m.AlgoEnable = m.ParsedAlgo
	for f := range m.AlgoEnable {
		for a := Algorithm(0); a < NumAlgorithms; a++ {
			disable := false
			if s.NNodes == 1 && a == NVLSTree {
				disable = true
			}
			if !m.CollNetEnable && (a == CollNetDirect || a == CollNetChain || (a == NVLS && s.NNodes > 1)) {
				disable = true
			}
			if m.CollNetEnable && a == CollNetChain && !s.CollNetChainSupport {
				disable = true
			}
			if s.NVSCount == 0 && a == CollNetDirect {
				disable = true
			}
			if disable {
				m.AlgoEnable[f][a] = 0
			}
		}
	}
	for c := Func(0); c < NumFuncs; c++ {
		for a := Algorithm(0); a < NumAlgorithms; a++ {
			g := m.Graphs.For(a)
			for p := Protocol(0); p < NumProtocols; p++ {
				pe := m.ParsedProto[c][p]
				if pe == 2 && p == LL128 {
					ok := true
					if m.Opts.LL128C2C != 0 && s.MinCompCap >= 90 {
						ok = ok && g.TypeInter <= topo.PathPXN
					} else {
						ok = ok && g.TypeInter <= topo.PathPXB
					}
					ok = ok && g.TypeIntra <= topo.PathNVB
					ok = ok && (s.MinCompCap == s.MaxCompCap || s.MinCompCap >= 90)
					ok = ok && !(s.MinCompCap < 70 || (s.MinCompCap == 90 && s.CUDARTVersion == 11080 && c == AllReduce && a == Ring && s.NRanks == 2))
					pe = 0
					if ok {
						pe = 1
					}
				}
				m.ProtoUsed[c][a][p] = pe != 0 && m.AlgoEnable[c][a] != 0
				if pe == 0 || m.AlgoEnable[c][a] == 0 {
					m.Bandwidths[c][a][p] = 0
				}
			}
		}
	}
}

// setThreadThresholds is tuning.cc:587-608.
func (m *Model) setThreadThresholds() {
	for a := range m.ThreadThresholds {
		m.ThreadThresholds[a] = [NumProtocols]int64{LLThreadThreshold, LL128ThreadThreshold, SimpleThreadThresh}
	}
	m.ThreadThresholds[Ring][LL] *= int64(m.Sys.NRanks)
	m.ThreadThresholds[CollNetDirect][Simple] = 512
	m.ThreadThresholds[CollNetChain][Simple] = 512
	if m.Opts.ThreadThresholdsSet {
		t := m.Opts.ThreadThresholds
		for a := 0; a < 2; a++ { // Tree, then Ring
			for p := 0; p < NumProtocols; p++ {
				if v := t[a*NumProtocols+p]; v >= 0 {
					m.ThreadThresholds[a][p] = v
				}
			}
		}
	}
}
