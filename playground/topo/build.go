package topo

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// NCCL node ids: a 64-bit value whose top byte is the host ("system") id and
// whose low 56 bits are a local id (topo.h:89-96). The model has one host per
// System, so the system id is always 0 and the id is the local id.
const localIDMask = 0x00ffffffffffffff

// PCI class and generation dictionaries (kvDictPciClass, kvDictPciGen,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L538-L556).
// Keys match as prefixes, first match wins.
var (
	pciClassKeys   = []string{"0x060400", "0x080100", "0x068000", "0x068001", "0x03", "0x02"}
	pciClassValues = []int{int(PCI), int(PCI), int(NVS), int(CPU), int(GPU), int(NIC)}

	// Per-lane speed in units of 100 Mb/s; link bw (GB/s) = width*speed/80.
	pciGenKeys = []string{"2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", "32 GT/s",
		"2.5 GT/s PCIe", "5.0 GT/s PCIe", "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe"}
	pciGenValues = []int{15, 30, 60, 120, 240, 15, 30, 60, 120, 240, 480}

	cpuArchKeys     = []string{"x86_64", "arm64", "ppc64"}
	cpuArchValues   = []int{int(ArchX86), int(ArchARM), int(ArchPower)}
	cpuVendorKeys   = []string{"GenuineIntel", "AuthenticAMD", "CentaurHauls", "  Shanghai  "}
	cpuVendorValues = []int{int(VendorIntel), int(VendorAMD), int(VendorZhaoxin), int(VendorZhaoxin)}
)

// pciGenFallback is kvDictPciGen's default (60, i.e. 8 GT/s).
const pciGenFallback = 60

// PCIeLinkBw returns the bandwidth NCCL assigns to a PCI link from the
// "link_speed" string and "link_width" (ncclTopoAddPci,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L649-L658):
// width * perLane / 80, where perLane is in 100 Mb/s units, so Gen4 x16 is
// 16*120/80 = 24 GB/s and Gen5 x16 is 16*240/80 = 48 GB/s. A width of 0 is
// read as 16. known is false when the speed string fell back to 60.
func PCIeLinkBw(speed string, width int) (bw float32, known bool) {
	if width == 0 {
		width = 16
	}
	perLane, known := kvPrefix(speed, pciGenKeys, pciGenValues, pciGenFallback)
	// C: int*int then divided by the double 80.0, stored in a float.
	return float32(float64(int32(width)*int32(perLane)) / 80.0), known
}

// InterCPUBw returns the bandwidth NCCL gives the SMP link leaving a CPU of
// the given kind (ncclTopoGetInterCpuBw,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L60-L83).
func InterCPUBw(arch CPUArch, vendor CPUVendor, model CPUModel) float32 {
	switch {
	case arch == ArchPower:
		return P9Bw
	case arch == ArchARM:
		return ARMBw
	case arch == ArchX86 && vendor == VendorIntel:
		switch model {
		case ModelIntelERP:
			return ERPQPIBw
		case ModelIntelSRP:
			return SRPQPIBw
		case ModelIntelSKL:
			return SKLQPIBw
		}
		return BDWQPIBw
	case arch == ArchX86 && vendor == VendorAMD:
		return AMDBw
	case arch == ArchX86 && vendor == VendorZhaoxin:
		if model == ModelZhaoxinYF {
			return YongfengZPIBw
		}
		return ZPIBw
	}
	return LocBw
}

// IntelModel classifies an Intel CPU from its family and model ids the way
// ncclTopoAddCpu does (topo.cc:748-751): family 6 with model >= 0xCF is
// Emerald Rapids class, >= 0x8F Sapphire Rapids, >= 0x55 Skylake, else
// Broadwell.
func IntelModel(family, model int) CPUModel {
	switch {
	case family == 6 && model >= 0xCF:
		return ModelIntelERP
	case family == 6 && model >= 0x8F:
		return ModelIntelSRP
	case family == 6 && model >= 0x55:
		return ModelIntelSKL
	}
	return ModelIntelBDW
}

// bnode and blink form the mutable pointer graph used while building; it is
// frozen into the index-based System at the end, like NCCL's node arrays.
type bnode struct {
	typ    NodeType
	id     int64
	line   int
	busID  string
	device uint64
	class  string
	links  []*blink
	gpu    GPUInfo
	cpu    CPUInfo
	net    NetInfo
	peer   *bnode // GPU <-> DEV
}

type blink struct {
	typ LinkType
	bw  float32
	rem *bnode
}

type builder struct {
	nodes [NumNodeTypes][]*bnode
	warns *warnings
}

func (b *builder) warn(line int, format string, args ...any) {
	b.warns.add(line, format, args...)
}

func (b *builder) create(t NodeType, id int64, line int) (*bnode, error) {
	if len(b.nodes[t]) >= MaxNodesPerType {
		return nil, lineErr(line, "too many %s nodes (NCCL's limit is %d)", t, MaxNodesPerType)
	}
	if t == CPU && len(b.nodes[t]) >= MaxCPUs {
		return nil, lineErr(line, "more than %d CPUs (NUMA nodes) on one host: the largest servers have 32, and NCCL links every pair of them, so the model reads at most %d", MaxCPUs, MaxCPUs)
	}
	if t == NET && len(b.nodes[t]) >= MaxNICs {
		return nil, lineErr(line, "more than %d NICs on one host (NCCL's IB transport exposes at most MAX_IB_VDEVS = %d network devices)", MaxNICs, MaxNICs)
	}
	n := &bnode{typ: t, id: id, line: line}
	switch t {
	case GPU:
		n.gpu = GPUInfo{Dev: -1, Rank: -1, SM: -1}
	case DEV:
		n.gpu = GPUInfo{Dev: -1, Rank: -1, SM: -1}
	case CPU:
		n.cpu = CPUInfo{Model: ModelUndef}
	case NET:
		n.net = NetInfo{Port: -1, RailID: -1, PlaneID: -1}
	}
	b.nodes[t] = append(b.nodes[t], n)
	return n, nil
}

func (b *builder) get(t NodeType, id int64) *bnode {
	for _, n := range b.nodes[t] {
		if n.id == id {
			return n
		}
	}
	return nil
}

// connect adds bw to the link node->rem of type t, creating it if needed, and
// keeps the link list sorted by descending bandwidth with the stable
// insertion of ncclTopoConnectNodes
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L168-L193).
func (b *builder) connect(node, rem *bnode, t LinkType, bw float32) error {
	i := 0
	for ; i < len(node.links); i++ {
		if node.links[i].rem == rem && node.links[i].typ == t {
			break
		}
	}
	if i == len(node.links) {
		if len(node.links) >= MaxLinksPerNode {
			return lineErr(node.line, "too many links on %s node (NCCL's limit is %d)", node.typ, MaxLinksPerNode)
		}
		node.links = append(node.links, &blink{typ: t, rem: rem})
	}
	l := node.links[i]
	l.bw += bw
	for i > 0 && node.links[i-1].bw < l.bw {
		node.links[i] = node.links[i-1]
		i--
	}
	node.links[i] = l
	return nil
}

// reqAttr returns a required attribute or the error NCCL's xmlGetAttrStr
// raises ("Attribute X of node Y not found").
func reqAttr(e *element, key string) (string, error) {
	v, ok := e.attr(key)
	if !ok {
		return "", lineErr(e.line, "attribute %s of <%s> not found", key, e.name)
	}
	return v, nil
}

// reqInt reads a required integer attribute with strtol semantics.
func (b *builder) reqInt(e *element, key string) (int, error) {
	s, err := reqAttr(e, key)
	if err != nil {
		return 0, err
	}
	v, clean := cInt(s)
	if !clean {
		b.warn(e.line, "attribute %s=%q of <%s> is not a clean integer; NCCL's strtol reads it as %d", key, s, e.name, v)
	}
	return v, nil
}

// optInt reads an optional integer attribute (xmlGetAttrIntDefault).
func (b *builder) optInt(e *element, key string, def int) int {
	s, ok := e.attr(key)
	if !ok {
		return def
	}
	v, clean := cInt(s)
	if !clean {
		b.warn(e.line, "attribute %s=%q of <%s> is not a clean integer; NCCL's strtol reads it as %d", key, s, e.name, v)
	}
	return v
}

// ParseXML reads an NCCL topology XML (as NCCL_TOPO_DUMP_FILE writes it) and
// builds the system graph following ncclTopoGetSystemFromXml
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L958-L990).
// Elements and attributes the model does not read are kept in
// System.Unknown and reported as warnings; malformed XML, missing required
// attributes and inputs beyond the size limits are errors of the form
// "line N: message".
func ParseXML(r io.Reader) (*System, []Warning, error) {
	doc, err := readDocument(r)
	if err != nil {
		return nil, nil, err
	}
	b := &builder{warns: &doc.warnings}
	sysEl := findTag(doc.root, "system")
	if sysEl == nil {
		return nil, b.warns.result(), lineErr(doc.root.line, "no <system> element (root is <%s>)", doc.root.name)
	}
	if sysEl != doc.root {
		b.warn(doc.root.line, "root element <%s> is not <system>; using the <system> on line %d", doc.root.name, sysEl.line)
	}
	ver, err := b.reqInt(sysEl, "version")
	if err != nil {
		return nil, b.warns.result(), err
	}
	if ver != 1 {
		return nil, b.warns.result(), lineErr(sysEl.line, "topology XML has version %d, NCCL needs 1 (NCCL_TOPO_XML_VERSION)", ver)
	}
	sys := &System{Hosts: 1, P2P: P2PAll, Description: doc.description}
	if n := utf8.RuneCountInString(sys.Description); n > MaxDescription {
		b.warn(doc.descriptionLine, "the description comment is %d characters; it is shown cut to %d (NCCL's reader skips comments, so this changes nothing in NCCL)", n, MaxDescription)
		sys.Description = string([]rune(sys.Description)[:MaxDescription]) + "…"
	}
	for _, a := range sysEl.attrs {
		if (a.ns == NamespaceURI || a.ns == "dn") && a.name == "p2p" {
			p, err := ParseP2PSupport(a.value)
			if err != nil {
				return nil, b.warns.result(), lineErr(sysEl.line, "%v", err)
			}
			sys.P2P = p
		}
	}
	checkKnown(sysEl, &sys.Unknown, b.warns)

	hashes := map[string]bool{}
	for _, c := range sysEl.children {
		if c.ns == "" && c.name == "cpu" {
			if h, ok := c.attr("host_hash"); ok {
				hashes[h] = true
			}
			if err := b.addCPU(c); err != nil {
				return nil, b.warns.result(), err
			}
		}
	}
	if len(hashes) > 1 {
		b.warn(sysEl.line, "%d different host_hash values: NCCL rewrites host_hash when it loads a topology file, so all CPUs are treated as one host", len(hashes))
	}
	if err := b.walkSecondPass(sysEl); err != nil {
		return nil, b.warns.result(), err
	}
	if err := b.flattenBcmSwitches(); err != nil {
		return nil, b.warns.result(), err
	}
	if err := b.connectCPUs(); err != nil {
		return nil, b.warns.result(), err
	}
	if n := len(b.nodes[GPU]); n > MaxLocalRanks {
		b.warn(sysEl.line, "%d GPUs on one host: NCCL sizes its per-host state for at most %d local ranks (NCCL_MAX_LOCAL_RANKS, https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/device.h#L92) without checking, so no communicator can use them all; the model reads the topology and its paths but does not search graphs for it", n, MaxLocalRanks)
	}
	b.sortSystem()
	if err := b.freeze(sys); err != nil {
		return nil, b.warns.result(), err
	}
	return sys, b.warns.result(), nil
}

// addCPU follows ncclTopoAddCpu
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L726-L776).
func (b *builder) addCPU(e *element) error {
	numa, err := b.reqInt(e, "numaid")
	if err != nil {
		return err
	}
	cpu, err := b.create(CPU, int64(numa)&localIDMask, e.line)
	if err != nil {
		return err
	}
	cpu.cpu.NumaID = numa
	cpu.cpu.Affinity, _ = e.attr("affinity")
	arch, err := reqAttr(e, "arch")
	if err != nil {
		return err
	}
	a, ok := kvPrefix(arch, cpuArchKeys, cpuArchValues, 0)
	if !ok {
		b.warn(e.line, "unknown CPU arch %q; NCCL falls back to 0 (unknown)", arch)
	}
	cpu.cpu.Arch = CPUArch(a)
	if cpu.cpu.Arch == ArchX86 {
		vendor, err := reqAttr(e, "vendor")
		if err != nil {
			return err
		}
		v, ok := kvPrefix(vendor, cpuVendorKeys, cpuVendorValues, 0)
		if !ok {
			b.warn(e.line, "unknown CPU vendor %q; NCCL falls back to 0 (unknown)", vendor)
		}
		cpu.cpu.Vendor = CPUVendor(v)
		switch cpu.cpu.Vendor {
		case VendorIntel:
			fam, err := b.reqInt(e, "familyid")
			if err != nil {
				return err
			}
			mod, err := b.reqInt(e, "modelid")
			if err != nil {
				return err
			}
			cpu.cpu.Model = IntelModel(fam, mod)
		case VendorZhaoxin:
			fam, err := b.reqInt(e, "familyid")
			if err != nil {
				return err
			}
			mod, err := b.reqInt(e, "modelid")
			if err != nil {
				return err
			}
			if fam == 7 && mod == 0x5B {
				cpu.cpu.Model = ModelZhaoxinYF
			}
		}
	}
	for _, c := range e.children {
		if c.ns != "" {
			continue
		}
		switch c.name {
		case "pci":
			if err := b.addPCI(c, cpu, numa); err != nil {
				return err
			}
		case "nic":
			// NICs directly under a CPU share one NIC node per NUMA id; the
			// numa id sits above the 56-bit local id mask, so NCCL's id is 0.
			id := (int64(numa) << 56) & localIDMask
			nic := b.get(NIC, id)
			if nic == nil {
				if nic, err = b.create(NIC, id, c.line); err != nil {
					return err
				}
				if err := b.connect(cpu, nic, LinkPCI, LocBw); err != nil {
					return err
				}
				if err := b.connect(nic, cpu, LinkPCI, LocBw); err != nil {
					return err
				}
			}
			if err := b.addNIC(c, nic); err != nil {
				return err
			}
		}
	}
	return nil
}

func pciDevice(e *element) uint64 {
	var v uint64
	for i, k := range []string{"vendor", "device", "subsystem_vendor", "subsystem_device"} {
		if s, ok := e.attr(k); ok {
			x, _ := cStrtol(s, 0)
			v += uint64(x) << (48 - 16*i)
		}
	}
	return v
}

// addPCI follows ncclTopoAddPci
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L637-L702).
func (b *builder) addPCI(e *element, parent *bnode, numa int) error {
	class, err := reqAttr(e, "class")
	if err != nil {
		return err
	}
	t, _ := kvPrefix(class, pciClassKeys, pciClassValues, int(PCI))
	typ := NodeType(t)
	busStr, err := reqAttr(e, "busid")
	if err != nil {
		return err
	}
	busID := busIDToInt64(busStr)
	width, err := b.reqInt(e, "link_width")
	if err != nil {
		return err
	}
	speed, err := reqAttr(e, "link_speed")
	if err != nil {
		return err
	}
	bw, known := PCIeLinkBw(speed, width)
	if !known {
		b.warn(e.line, "link_speed %q not in NCCL's table; it assumes 60 (8 GT/s) per lane", speed)
	}
	if width > 32 {
		b.warn(e.line, "link_width=%d: PCIe links are at most 32 lanes wide; NCCL computes width * speed / 80 as it is, %.1f GB/s for this link", width, bw)
	}
	if width < 0 {
		b.warn(e.line, "link_width=%d is negative; NCCL computes width * speed / 80 as it is, a bandwidth of %.1f GB/s for this PCI link, so no path through it has usable bandwidth", width, bw)
	}

	nGPU := 0
	for _, g := range e.children {
		if g.ns != "" || g.name != "gpu" {
			continue
		}
		if _, ok := g.attr("rank"); !ok {
			// A GPU outside the communicator: NCCL skips the whole element.
			b.warn(g.line, "<gpu> without rank is not part of the communicator; NCCL ignores its <pci> element")
			return nil
		}
		nGPU++
		if nGPU > 1 {
			return lineErr(g.line, "more than one <gpu> in one <pci> (MLOPart partitions) is not modelled")
		}
		if err := b.addGPU(e, g, parent, busID, busStr, bw); err != nil {
			return err
		}
	}

	var node *bnode
	if nicEl := e.child("nic"); nicEl != nil {
		id := ((int64(numa) << 56) + busID) & localIDMask
		nic := b.get(NIC, id)
		if nic == nil {
			if nic, err = b.create(NIC, id, e.line); err != nil {
				return err
			}
			nic.busID = busStr
			nic.class = class
			nic.device = pciDevice(e)
			node = nic
		}
		if err := b.addNIC(nicEl, nic); err != nil {
			return err
		}
	} else if typ == PCI {
		if node, err = b.create(PCI, busID&localIDMask, e.line); err != nil {
			return err
		}
		node.busID = busStr
		node.class = class
		node.device = pciDevice(e)
		for _, c := range e.children {
			if c.ns == "" && c.name == "pci" {
				if err := b.addPCI(c, node, numa); err != nil {
					return err
				}
			}
		}
	}
	if node != nil {
		if err := b.connect(node, parent, LinkPCI, bw); err != nil {
			return err
		}
		if err := b.connect(parent, node, LinkPCI, bw); err != nil {
			return err
		}
	}
	return nil
}

// addGPU follows ncclTopoAddGpuSub/ncclTopoAddGpu for a GPU that is not split
// into MLOPart partitions
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L590-L635).
func (b *builder) addGPU(pciEl, g *element, parent *bnode, busID int64, busStr string, bw float32) error {
	if busID&0x3 != 0 {
		return lineErr(pciEl.line, "bus id %s has non-zero bits in NCCL's MLOPart mask 0x3", busStr)
	}
	if mp := b.optInt(g, "mlopart", -1); mp != -1 {
		b.warn(g.line, "mlopart=%d: MLOPart partitions are not modelled, the GPU is treated as a whole device", mp)
	}
	if b.get(DEV, busID) != nil {
		return lineErr(pciEl.line, "duplicate GPU bus id %s", busStr)
	}
	sm, err := b.reqInt(g, "sm")
	if err != nil {
		return err
	}
	if sm < 30 || sm > 130 {
		b.warn(g.line, "sm=%d is no GPU's compute capability (NVIDIA's run from 30 to 120); NCCL takes it as it is for its bandwidth tables and tuning", sm)
	}
	dev, err := b.reqInt(g, "dev")
	if err != nil {
		return err
	}
	rank, err := b.reqInt(g, "rank")
	if err != nil {
		return err
	}
	gdr, err := b.reqInt(g, "gdr")
	if err != nil {
		return err
	}
	for _, other := range b.nodes[GPU] {
		if other.gpu.Rank == rank {
			return lineErr(g.line, "duplicate GPU rank %d (also on line %d)", rank, other.line)
		}
	}
	d, err := b.create(DEV, busID, pciEl.line)
	if err != nil {
		return err
	}
	d.busID = busStr
	d.class, _ = pciEl.attr("class")
	d.device = pciDevice(pciEl)
	d.gpu = GPUInfo{Dev: dev, Rank: -1, SM: sm, GDR: gdr != 0}
	if err := b.connect(d, parent, LinkPCI, bw); err != nil {
		return err
	}
	if err := b.connect(parent, d, LinkPCI, bw); err != nil {
		return err
	}
	gpu, err := b.create(GPU, busID, g.line)
	if err != nil {
		return err
	}
	gpu.busID = busStr
	gpu.class = d.class
	gpu.device = d.device
	gpu.gpu = GPUInfo{Dev: dev, Rank: rank, SM: sm, GDR: gdr != 0}
	gpu.peer, d.peer = d, gpu
	if err := b.connect(d, gpu, LinkLOC, LocBw); err != nil {
		return err
	}
	return b.connect(gpu, d, LinkLOC, LocBw)
}

// addNIC follows ncclTopoAddNic/ncclTopoAddNet
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L401-L509).
func (b *builder) addNIC(e *element, nic *bnode) error {
	for _, n := range e.children {
		if n.ns != "" || n.name != "net" {
			continue
		}
		if _, ok := n.attr("dev"); !ok {
			b.warn(n.line, "<net> without dev is not added to the graph (as in NCCL)")
			continue
		}
		isNet := b.optInt(n, "net", 1)
		if b.optInt(n, "gin", 0) != 0 || b.optInt(n, "rma", 0) != 0 {
			b.warn(n.line, "GIN/RMA device roles are not modelled")
		}
		if isNet == 0 {
			continue
		}
		dev, err := b.reqInt(n, "dev")
		if err != nil {
			return err
		}
		id := int64(dev) & localIDMask
		if prev := b.get(NET, id); prev != nil {
			return lineErr(n.line, "duplicate <net dev=\"%d\"> (also on line %d)", dev, prev.line)
		}
		net, err := b.create(NET, id, n.line)
		if err != nil {
			return err
		}
		ni := NetInfo{Dev: dev, RailID: -1, PlaneID: -1}
		ni.Name, _ = n.attr("name")
		if g, ok := n.attr("guid"); ok {
			ni.Asic = cStrtoull16(g)
		} else {
			ni.Asic = uint64(id)
		}
		ni.SpeedMbs = b.optInt(n, "speed", 0)
		if ni.SpeedMbs <= 0 {
			if _, given := n.attr("speed"); given {
				b.warn(n.line, "NIC speed=%d Mb/s: NCCL takes 10,000 Mb/s (10 Gb/s) for a speed of 0 or less, as some NICs report -1", ni.SpeedMbs)
			}
			ni.SpeedMbs = 10000 // some NICs report -1
		}
		ni.Bw = float32(float64(ni.SpeedMbs) / 8000.0)
		if s, ok := n.attr("latency"); ok {
			ni.Latency, _ = cStrtof(s)
		}
		ni.Port = b.optInt(n, "port", 0)
		ni.GDR = b.optInt(n, "gdr", 0) != 0
		ni.MaxConn = b.optInt(n, "maxconn", 64)
		ni.Coll = b.optInt(n, "coll", 0) != 0
		ni.RailID = int(int16(b.optInt(n, "rail", -1)))
		ni.PlaneID = int(int16(b.optInt(n, "plane", -1)))
		net.net = ni
		net.busID = nic.busID
		if err := b.connect(nic, net, LinkNET, ni.Bw); err != nil {
			return err
		}
		if err := b.connect(net, nic, LinkNET, ni.Bw); err != nil {
			return err
		}
	}
	return nil
}

// walkSecondPass adds NVLink, C2C and PCI-link edges after every node
// exists, as ncclTopoAddNvLinks, ncclTopoAddC2c and ncclTopoAddPciLinks do
// (https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L811-L956).
// NCCL runs three walks; they touch disjoint elements, so one walk in the
// same document order gives the same links in the same order, except that
// all NVLinks are added before any C2C or PCI link. Hence two passes.
func (b *builder) walkSecondPass(sysEl *element) error {
	if err := b.walk(sysEl, "", "nvlink"); err != nil {
		return err
	}
	if err := b.walk(sysEl, "", "c2c"); err != nil {
		return err
	}
	return b.walk(sysEl, "", "pcilink")
}

func (b *builder) walk(e *element, parentBus string, kind string) error {
	if e.ns != "" {
		return nil
	}
	if e.name == kind {
		switch kind {
		case "nvlink":
			return b.addNVLink(e, parentBus)
		case "c2c":
			return b.addC2C(e, parentBus)
		case "pcilink":
			return b.addPCILink(e, parentBus)
		}
	}
	bus := parentBus
	if v, ok := e.attr("busid"); ok {
		bus = v
	}
	// Only descend along the known structure; misplaced elements were
	// reported by checkKnown and are not modelled.
	for _, c := range e.children {
		if c.ns != "" || !contains(knownChildren[e.name], c.name) {
			continue
		}
		if err := b.walk(c, bus, kind); err != nil {
			return err
		}
	}
	return nil
}

func (b *builder) gpuDev(e *element, parentBus string) (*bnode, error) {
	if e.parent == nil || e.parent.name != "gpu" {
		return nil, lineErr(e.line, "<%s> outside <gpu>", e.name)
	}
	d := b.get(DEV, busIDToInt64(parentBus))
	if d == nil {
		return nil, lineErr(e.line, "<%s> belongs to a GPU that is not in the graph (GPU %s has no rank); NCCL fails with \"could not find DEV\"", e.name, parentBus)
	}
	return d, nil
}

// findLocalCPU walks up the PCI tree from n (findLocalCpu, topo.cc:40-55).
func findLocalCPU(n, from *bnode) *bnode {
	if n.typ == CPU {
		return n
	}
	for _, l := range n.links {
		if l.typ == LinkPCI && l.rem != from && (l.rem.typ == PCI || l.rem.typ == CPU) {
			if c := findLocalCPU(l.rem, n); c != nil {
				return c
			}
		}
	}
	return nil
}

func (b *builder) addNVLink(e *element, parentBus string) error {
	d, err := b.gpuDev(e, parentBus)
	if err != nil {
		return err
	}
	count, err := b.reqInt(e, "count")
	if err != nil {
		return err
	}
	tclass, err := reqAttr(e, "tclass")
	if err != nil {
		return err
	}
	t, _ := kvPrefix(tclass, pciClassKeys, pciClassValues, int(PCI))
	if count < 0 {
		// The link's bandwidth (count x the per-link figure) would be
		// below zero, and so would every path through it: no answer of
		// the model means anything after that, so the file is refused
		// here, where the line is known.
		return lineErr(e.line, "NVLink count=%d is negative: NCCL would give this link %.1f GB/s, which no path can use (a GPU has 1 to %d NVLinks to one peer)", count, float32(count)*NVLinkBw(d.gpu.SM), maxNVLinksPerGPU)
	}
	if count < 1 || count > maxNVLinksPerGPU {
		b.warn(e.line, "NVLink count=%d: NCCL multiplies one NVLink's bandwidth by it as it is (a GPU has 1 to %d NVLinks to one peer), so this link carries %.1f GB/s", count, maxNVLinksPerGPU, float32(count)*NVLinkBw(d.gpu.SM))
	}
	nvlBw := NVLinkBw(d.gpu.SM)
	bw := float32(count) * nvlBw
	switch NodeType(t) {
	case GPU:
		target, err := reqAttr(e, "target")
		if err != nil {
			return err
		}
		rem := b.get(DEV, busIDToInt64(target))
		if rem == nil {
			b.warn(e.line, "NVLink target %s is not a GPU of the graph; NCCL adds no link", target)
			return nil
		}
		if rem == d {
			b.warn(e.line, "NVLink target %s is the GPU itself; NCCL adds a link from the GPU to itself (ncclTopoAddNvLinks does not check), which leads to no other GPU but counts in this GPU's NVLink bandwidth", target)
		}
		return b.connect(d, rem, LinkNVL, bw)
	case CPU:
		cpu := findLocalCPU(d, nil)
		if cpu == nil {
			b.warn(e.line, "NVLink to a CPU but the GPU has no local CPU; no link added")
			return nil
		}
		if err := b.connect(d, cpu, LinkNVL, bw); err != nil {
			return err
		}
		return b.connect(cpu, d, LinkNVL, bw)
	default:
		// Every other target class is an NVSwitch; NCCL keeps a single NVS node.
		if NodeType(t) != NVS {
			b.warn(e.line, "NVLink target class %q is treated as an NVSwitch, as NCCL does", tclass)
		}
		nvs := b.get(NVS, 0)
		if nvs == nil {
			if nvs, err = b.create(NVS, 0, e.line); err != nil {
				return err
			}
		}
		if err := b.connect(d, nvs, LinkNVL, bw); err != nil {
			return err
		}
		return b.connect(nvs, d, LinkNVL, bw)
	}
}

func (b *builder) addC2C(e *element, parentBus string) error {
	d, err := b.gpuDev(e, parentBus)
	if err != nil {
		return err
	}
	count, err := b.reqInt(e, "count")
	if err != nil {
		return err
	}
	bwAttr, err := b.reqInt(e, "bw")
	if err != nil {
		return err
	}
	bw := float32(float64(int32(bwAttr)*int32(count)) / 1000.0)
	cpu := findLocalCPU(d, nil)
	if cpu == nil {
		return nil
	}
	if err := b.connect(d, cpu, LinkC2C, bw); err != nil {
		return err
	}
	return b.connect(cpu, d, LinkC2C, bw)
}

func (b *builder) addPCILink(e *element, parentBus string) error {
	pci := b.get(PCI, busIDToInt64(parentBus)&localIDMask)
	if pci == nil {
		return lineErr(e.line, "<pcilink> inside %s, which is not a PCI switch of the graph", parentBus)
	}
	target, err := reqAttr(e, "target")
	if err != nil {
		return err
	}
	rem := b.get(PCI, busIDToInt64(target)&localIDMask)
	if rem == nil {
		b.warn(e.line, "pcilink target %s is not a PCI switch of the graph; no link added", target)
		return nil
	}
	if rem == pci {
		b.warn(e.line, "pcilink target %s is the switch itself; NCCL adds a link from the switch to itself (ncclTopoConnectNodes does not check), which no path uses", target)
	}
	return b.connect(pci, rem, LinkLOC, LocBw)
}

// bcmGen recognises Broadcom PEX Gen4/Gen5 switches, which show up as two
// levels of bridges although they switch at full speed (getBcmGen,
// topo.cc:199-203).
func bcmGen(device uint64, level int) int {
	if device&0xfffffffffffff000 == 0x1000c0101000a000 {
		return 4
	}
	if device&0xfffffffffffff000 == (0x1000c03010000000 | uint64(level)*0x1000) {
		return 5
	}
	return 0
}

// flattenBcmSwitches merges the second level of a Broadcom switch into the
// first (ncclTopoFlattenBcmSwitches,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L204-L268).
func (b *builder) flattenBcmSwitches() error {
	for s := 0; s < len(b.nodes[PCI]); s++ {
		sw := b.nodes[PCI][s]
		gen := bcmGen(sw.device, 0)
		if gen == 0 {
			continue
		}
		var subs []*bnode
		kept := sw.links[:0:0]
		for _, l := range sw.links {
			if l.rem.typ == PCI && bcmGen(l.rem.device, 1) == gen {
				subs = append(subs, l.rem)
				continue
			}
			kept = append(kept, l)
		}
		sw.links = kept
		for _, sub := range subs {
			for _, l := range sub.links {
				rem := l.rem
				if rem == sw {
					continue
				}
				if len(sw.links) >= MaxLinksPerNode {
					return lineErr(sw.line, "too many links on PCI switch %s (NCCL's limit is %d)", sw.busID, MaxLinksPerNode)
				}
				sw.links = append(sw.links, &blink{typ: l.typ, bw: l.bw, rem: rem})
				for _, rl := range rem.links {
					if rl.rem == sub {
						rl.rem = sw
						break
					}
				}
			}
			b.remove(sub)
		}
		sw.device |= 0xffff
		s = -1 // restart, as NCCL does after changing the node array
	}
	return nil
}

// remove deletes n and every link pointing to it (ncclTopoRemoveNode).
func (b *builder) remove(n *bnode) {
	for t := range b.nodes {
		for _, o := range b.nodes[t] {
			keep := o.links[:0]
			for _, l := range o.links {
				if l.rem != n {
					keep = append(keep, l)
				}
			}
			o.links = keep
		}
	}
	list := b.nodes[n.typ]
	for i, o := range list {
		if o == n {
			b.nodes[n.typ] = append(list[:i:i], list[i+1:]...)
			break
		}
	}
}

// connectCPUs joins every pair of CPUs with a SYS link whose bandwidth
// depends on the source CPU (ncclTopoConnectCpus, topo.cc:270-283).
func (b *builder) connectCPUs() error {
	for _, c1 := range b.nodes[CPU] {
		for _, c2 := range b.nodes[CPU] {
			if c1 == c2 {
				continue
			}
			bw := InterCPUBw(c1.cpu.Arch, c1.cpu.Vendor, c1.cpu.Model)
			if err := b.connect(c1, c2, LinkSYS, bw); err != nil {
				return err
			}
		}
	}
	return nil
}

// sortSystem moves each node's PCI up-link to the end of its list, walking
// the PCI tree from every CPU (ncclTopoSortSystem/ncclTopoSort,
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.cc#L345-L375).
func (b *builder) sortSystem() {
	for _, c := range b.nodes[CPU] {
		sortRec(c, nil, 0)
	}
}

func sortRec(n, up *bnode, depth int) {
	if depth > MaxDepth*2 {
		return // a malformed cycle; the XML tree cannot produce one
	}
	if up != nil {
		i := 0
		for i < len(n.links) && n.links[i].rem != up {
			i++
		}
		if i < len(n.links) {
			l := n.links[i]
			copy(n.links[i:], n.links[i+1:])
			n.links[len(n.links)-1] = l
		}
	}
	for _, l := range n.links {
		if l.typ == LinkPCI && l.rem != up {
			sortRec(l.rem, n, depth+1)
		}
	}
}

// freeze converts the pointer graph into the index-based System.
func (b *builder) freeze(sys *System) error {
	index := map[*bnode]NodeRef{}
	for t := range b.nodes {
		for i, n := range b.nodes[t] {
			index[n] = NodeRef{Type: NodeType(t), Index: i}
		}
	}
	for t := range b.nodes {
		sys.Nodes[t] = make([]Node, len(b.nodes[t]))
		for i, n := range b.nodes[t] {
			node := Node{Type: n.typ, Index: i, ID: n.id, Line: n.line, BusID: n.busID,
				Device: n.device, Class: n.class, GPU: n.gpu, CPU: n.cpu, Net: n.net}
			if n.peer != nil {
				node.GPU.Peer = index[n.peer].Index
			}
			sys.Nodes[t][i] = node
		}
	}
	for t := range b.nodes {
		for i, n := range b.nodes[t] {
			from := NodeRef{Type: NodeType(t), Index: i}
			for _, l := range n.links {
				to, ok := index[l.rem]
				if !ok {
					return fmt.Errorf("internal error: link to a removed %s node", l.rem.typ)
				}
				sys.Nodes[t][i].Links = append(sys.Nodes[t][i].Links, int32(len(sys.Links)))
				sys.Links = append(sys.Links, Link{Type: l.typ, Bw: l.bw, From: from, To: to, Rev: -1})
			}
		}
	}
	sys.linkReverse()
	return nil
}

// linkReverse sets Link.Rev to the first link going back with the same type.
func (s *System) linkReverse() {
	for i := range s.Links {
		l := &s.Links[i]
		l.Rev = -1
		for _, li := range s.Node(l.To).Links {
			r := s.Links[li]
			if r.To == l.From && r.Type == l.Type {
				l.Rev = li
				break
			}
		}
	}
}

// String summarises the system in one line.
func (s *System) String() string {
	var parts []string
	for t := NodeType(0); t < NumNodeTypes; t++ {
		if n := len(s.Nodes[t]); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, t))
		}
	}
	return fmt.Sprintf("system: %s, %d links, %d host(s), p2p %s", strings.Join(parts, ", "), len(s.Links), s.Hosts, s.P2P)
}
