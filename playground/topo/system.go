package topo

import (
	"fmt"
	"strings"
)

// Bandwidth constants in GB/s, from
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.h#L17-L35.
// They are float32 because NCCL keeps every bandwidth in a C float; using the
// same precision keeps comparisons such as "link bw < needed bw" identical.
const (
	LocBw         float32 = 5000.0
	SM60NVLinkBw  float32 = 18.0
	SM70NVLinkBw  float32 = 20.0
	SM80NVLinkBw  float32 = 20.0
	SM86NVLinkBw  float32 = 12.0
	SM90NVLinkBw  float32 = 20.6
	SM100NVLinkBw float32 = 40.1
	PCIBw         float32 = 12.0 // PCIe Gen3 x16
	AMDBw         float32 = 16.0
	BDWQPIBw      float32 = 6.0
	SKLQPIBw      float32 = 10.0
	SRPQPIBw      float32 = 22.0
	ERPQPIBw      float32 = 40.0
	ZPIBw         float32 = 6.0
	YongfengZPIBw float32 = 9.0
	P9Bw          float32 = 32.0
	ARMBw         float32 = 6.0
	NetBw         float32 = 12.0 // 100 Gbit/s
)

// Limits of NCCL's data structures (graph.h, topo.h) that the model enforces
// so that a hostile input cannot make it allocate without bound.
const (
	MaxNodesPerType = 640 // NCCL_TOPO_MAX_NODES
	MaxLinksPerNode = 576 // NCCL_TOPO_MAX_LINKS
	// MaxNICs is the most NIC (NET) nodes of one host: MAX_IB_VDEVS
	// (MAX_IB_DEVS 32 physical devices × 8 virtual devices each,
	// src/transport/net_ib/common.h:112-113), the most network devices
	// NCCL's own transports expose to a communicator (sockets allow
	// MAX_IFS = 16). Beyond it the XML is refused before the path work,
	// which is GPUs × NICs.
	MaxNICs = 256
	// MaxLocalRanks is NCCL_MAX_LOCAL_RANKS (device.h:92), the size of
	// NCCL's per-host rank arrays; a host with more GPUs gets a warning,
	// and model.Search refuses to search graphs for it.
	MaxLocalRanks = 72
	// MaxCPUs is the most CPU (NUMA node) nodes of one host the model
	// reads. NCCL links every pair of CPUs (ncclTopoConnectCpus), so the
	// links and the path work grow with their square: 560 CPUs made 156,520
	// links, 3.6 s of CPU in ncclsim topo and 156,552 paths in the page's
	// figure. The largest servers have 32 NUMA nodes (8 sockets with 4
	// sub-NUMA clusters each); twice that is the cap, refused with a
	// message before the path work.
	MaxCPUs = 64
	// maxNVLinksPerGPU is the most NVLinks of one GPU (H100 and B200 have
	// 18); a count outside 1..18 gets a warning.
	maxNVLinksPerGPU = 18
)

// NVLinkBw returns the bandwidth of one NVLink for a GPU of the given compute
// capability (ncclTopoNVLinkBw,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.h#L274-L282).
func NVLinkBw(sm int) float32 {
	switch {
	case sm >= 100:
		return SM100NVLinkBw
	case sm >= 90:
		return SM90NVLinkBw
	case sm == 86:
		return SM86NVLinkBw
	case sm >= 80:
		return SM80NVLinkBw
	case sm >= 70:
		return SM70NVLinkBw
	case sm >= 60:
		return SM60NVLinkBw
	default:
		return SM80NVLinkBw
	}
}

// CPUArch is NCCL's CPU architecture code (graph.h:78-81).
type CPUArch int

// CPU architectures; ArchUnknown is what an unrecognised "arch" maps to.
const (
	ArchUnknown CPUArch = 0
	ArchX86     CPUArch = 1
	ArchPower   CPUArch = 2
	ArchARM     CPUArch = 3
	ArchMixed   CPUArch = 4
)

// String names the architecture.
func (a CPUArch) String() string {
	switch a {
	case ArchX86:
		return "x86_64"
	case ArchPower:
		return "ppc64"
	case ArchARM:
		return "arm64"
	case ArchMixed:
		return "mixed"
	}
	return "unknown"
}

// CPUVendor is NCCL's CPU vendor code (graph.h:82-85).
type CPUVendor int

// CPU vendors; VendorUnknown is what an unrecognised "vendor" maps to.
const (
	VendorUnknown CPUVendor = 0
	VendorIntel   CPUVendor = 1
	VendorAMD     CPUVendor = 2
	VendorZhaoxin CPUVendor = 3
	VendorMixed   CPUVendor = 4
)

// String names the vendor.
func (v CPUVendor) String() string {
	switch v {
	case VendorIntel:
		return "Intel"
	case VendorAMD:
		return "AMD"
	case VendorZhaoxin:
		return "Zhaoxin"
	case VendorMixed:
		return "mixed"
	}
	return "unknown"
}

// CPUModel is NCCL's CPU model code (graph.h:86-90). Intel and Zhaoxin share
// the numeric space, so the meaning depends on the vendor.
type CPUModel int

// CPU models; ModelUndef (-1) is NCCL_TOPO_UNDEF.
const (
	ModelUndef     CPUModel = -1
	ModelIntelBDW  CPUModel = 1 // Broadwell and older
	ModelIntelSKL  CPUModel = 2 // Skylake to Ice Lake (model >= 0x55)
	ModelIntelSRP  CPUModel = 3 // Sapphire Rapids (model >= 0x8F)
	ModelIntelERP  CPUModel = 4 // Emerald Rapids and newer (model >= 0xCF)
	ModelZhaoxinYF CPUModel = 1 // Yongfeng
)

// ModelName returns a readable name of the model for the given vendor, or
// "" when NCCL does not distinguish models of that vendor.
func ModelName(v CPUVendor, m CPUModel) string {
	switch {
	case v == VendorIntel && m == ModelIntelBDW:
		return "BDW"
	case v == VendorIntel && m == ModelIntelSKL:
		return "SKL"
	case v == VendorIntel && m == ModelIntelSRP:
		return "SRP"
	case v == VendorIntel && m == ModelIntelERP:
		return "ERP"
	case v == VendorZhaoxin && m == ModelZhaoxinYF:
		return "Yongfeng"
	}
	return ""
}

// P2PSupport says which GPU pairs the driver reports as peer-to-peer capable.
// NCCL learns this at run time from NVML (nvmlDeviceGetP2PStatus) and
// cudaDeviceCanAccessPeer, never from the topology XML, so the model keeps it
// as a property of the system: presets set it with the attribute p2p in the
// namespace NamespaceURI on <system>, and callers may override it.
type P2PSupport int

// P2P capability values.
const (
	// P2PAll: every pair reports P2P read and write as OK (datacenter GPUs).
	P2PAll P2PSupport = iota
	// P2PNone: no pair supports P2P (GeForce cards on stock drivers report
	// "GPU not supported"), so NCCL reroutes GPU traffic through host memory.
	P2PNone
	// P2PNVLink: only NVLink-connected pairs support P2P (GeForce cards joined
	// by an NVLink bridge).
	P2PNVLink
)

// NamespaceURI is the XML namespace of the attributes this project adds to
// NCCL topology files. NCCL's own parser ignores unknown attributes, so a
// preset stays loadable with NCCL_TOPO_FILE.
const NamespaceURI = "urn:distributed-nav:ncclsim"

// String returns the spelling used in XML and on the command line.
func (p P2PSupport) String() string {
	switch p {
	case P2PAll:
		return "all"
	case P2PNone:
		return "none"
	case P2PNVLink:
		return "nvlink"
	}
	return fmt.Sprintf("P2PSupport(%d)", int(p))
}

// ParseP2PSupport accepts "all"/"on", "none"/"off" and "nvlink".
func ParseP2PSupport(s string) (P2PSupport, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "all", "on", "yes", "1":
		return P2PAll, nil
	case "none", "off", "no", "0":
		return P2PNone, nil
	case "nvlink":
		return P2PNVLink, nil
	}
	return 0, fmt.Errorf("unknown P2P support %q (want all, none or nvlink)", s)
}

// NodeRef names a node by type and index within that type, the way NCCL
// addresses system->nodes[type].nodes[index].
type NodeRef struct {
	Type  NodeType
	Index int
}

// String renders the reference as TYPE/index.
func (r NodeRef) String() string { return fmt.Sprintf("%s/%d", r.Type, r.Index) }

// GPUInfo holds the attributes of a GPU (rank) node, or of a DEV node for the
// fields that apply to it (Dev, SM).
type GPUInfo struct {
	Dev  int  // NVML device index ("dev")
	Rank int  // communicator rank ("rank"); -1 on DEV nodes
	SM   int  // compute capability x10 ("sm")
	GDR  bool // GPUDirect RDMA support ("gdr")
	// Peer is, for a GPU node, the index of its DEV node; for a DEV node the
	// index of the (single) GPU node hanging off it.
	Peer int
}

// CPUInfo holds the attributes of a CPU (NUMA domain) node.
type CPUInfo struct {
	NumaID   int
	Arch     CPUArch
	Vendor   CPUVendor
	Model    CPUModel
	Affinity string
}

// NetInfo holds the attributes of a NET node (one network port).
type NetInfo struct {
	Name     string
	Dev      int     // plugin device number ("dev")
	SpeedMbs int     // "speed" in Mb/s after NCCL's default for <= 0
	Bw       float32 // speed/8000 GB/s
	Latency  float32 // "latency" in us
	Port     int
	Asic     uint64 // "guid", or the node id when absent
	GDR      bool
	MaxConn  int
	Coll     bool
	RailID   int // -1 when undefined
	PlaneID  int // -1 when undefined
}

// Node is one vertex of the system graph.
type Node struct {
	Type  NodeType
	Index int   // position in System.Nodes[Type]
	ID    int64 // NCCL's node id (bus id for PCI-derived nodes, dev for NET)
	Line  int   // line of the XML element that created it, 0 if synthesised
	BusID string
	// Links are indices into System.Links, in the order NCCL traverses them
	// (bandwidth-descending insertion, then the PCI up-link moved last).
	Links []int32

	Device uint64 // PCI vendor<<48 | device<<32 | subsystem vendor<<16 | subsystem device
	Class  string // PCI class string from the XML

	GPU GPUInfo // GPU and DEV nodes
	CPU CPUInfo // CPU nodes
	Net NetInfo // NET nodes
}

// Link is one directed edge of the system graph.
type Link struct {
	Type     LinkType
	Bw       float32
	From, To NodeRef
	// Rev is the index of the first link going back from To to From with the
	// same type (the one NCCL's reverse-link lookups find), or -1.
	Rev int32
}

// Unknown records an element or attribute the model does not understand. It
// is kept so that a caller can show it, and reported as a Warning.
type Unknown struct {
	Line    int
	Element string // element name
	Attr    string // attribute name, empty for a whole element
	Value   string
}

// System is the graph NCCL builds from a topology XML for one host
// (ncclTopoSystem). It is immutable once returned by ParseXML or Replicate;
// the graph search works on its own copy of the link bandwidths.
type System struct {
	Nodes [NumNodeTypes][]Node
	Links []Link

	// Hosts is the number of identical hosts (NCCL "nodes") the job spans. NCCL
	// never links hosts in its graph: each rank searches its own host and
	// reaches the others through NET nodes, so one copy of the graph describes
	// every host exactly.
	Hosts int
	// P2P is the peer-to-peer capability the driver would report.
	P2P P2PSupport
	// Description is the text of a leading "<!-- description: ... -->" comment.
	Description string
	// Unknown lists elements and attributes kept but not modelled.
	Unknown []Unknown
}

// Node returns the node r refers to.
func (s *System) Node(r NodeRef) *Node { return &s.Nodes[r.Type][r.Index] }

// Count returns the number of nodes of type t.
func (s *System) Count(t NodeType) int { return len(s.Nodes[t]) }

// GPUs returns the GPU (rank) nodes in NCCL's index order.
func (s *System) GPUs() []Node { return s.Nodes[GPU] }

// NETs returns the network ports in NCCL's index order.
func (s *System) NETs() []Node { return s.Nodes[NET] }

// LocalRanks is the number of GPUs (ranks) on one host.
func (s *System) LocalRanks() int { return len(s.Nodes[GPU]) }

// NRanks is the number of ranks of the whole job (all hosts).
func (s *System) NRanks() int { return s.Hosts * len(s.Nodes[GPU]) }

// CompCap returns the minimum and maximum compute capability over the DEV
// (physical GPU) nodes (ncclTopoGetCompCap,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L2211-L2222).
// ok is false when the system has no GPU.
func (s *System) CompCap() (minCC, maxCC int, ok bool) {
	devs := s.Nodes[DEV]
	if len(devs) == 0 {
		return 0, 0, false
	}
	minCC, maxCC = devs[0].GPU.SM, devs[0].GPU.SM
	for _, d := range devs[1:] {
		minCC = min(minCC, d.GPU.SM)
		maxCC = max(maxCC, d.GPU.SM)
	}
	return minCC, maxCC, true
}

// CPUType returns the architecture, vendor and model of the first CPU node,
// which is what NCCL uses for every CPU-dependent rule (ncclTopoCpuType,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L2141-L2146).
func (s *System) CPUType() (CPUArch, CPUVendor, CPUModel) {
	if len(s.Nodes[CPU]) == 0 {
		return ArchUnknown, VendorUnknown, ModelUndef
	}
	c := s.Nodes[CPU][0].CPU
	return c.Arch, c.Vendor, c.Model
}

// Replicate returns a copy of s describing a job over n identical hosts.
// The graph itself is shared: NCCL (without multi-node NVLink) builds only its
// own host's topology and reaches the other hosts through its NET nodes, so
// replication only changes the rank count and makes the search inter-node.
func (s *System) Replicate(n int) (*System, error) {
	if n < 1 {
		return nil, fmt.Errorf("replicate: %d hosts, want at least 1", n)
	}
	if n > MaxHosts {
		return nil, fmt.Errorf("replicate: %d hosts exceeds the limit of %d", n, MaxHosts)
	}
	c := *s
	c.Hosts = n
	return &c, nil
}

// MaxHosts bounds Replicate; 2^16 hosts is far beyond any job NCCL has run.
const MaxHosts = 1 << 16

// LinkCount returns the number of links leaving node r.
func (s *System) LinkCount(r NodeRef) int { return len(s.Node(r).Links) }

// Label returns a short human-readable name of a node, such as "GPU0",
// "NET/mlx5_0", "CPU0", "PCI/0000:17:00.0" or "NVS".
func (s *System) Label(r NodeRef) string {
	n := s.Node(r)
	switch r.Type {
	case GPU:
		return fmt.Sprintf("GPU%d", r.Index)
	case DEV:
		return fmt.Sprintf("DEV%d", r.Index)
	case CPU:
		return fmt.Sprintf("CPU%d", n.CPU.NumaID)
	case NET:
		if n.Net.Name != "" {
			return fmt.Sprintf("NET%d/%s", r.Index, n.Net.Name)
		}
		return fmt.Sprintf("NET%d", r.Index)
	case NVS:
		return "NVS"
	case PCI, NIC:
		if n.BusID != "" {
			return fmt.Sprintf("%s/%s", r.Type, n.BusID)
		}
	}
	return r.String()
}
