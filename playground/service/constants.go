package service

import (
	"strconv"
	"strings"

	"github.com/distributed-nav/distributed-nav/playground/gpus"
	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/tune"
	"github.com/distributed-nav/distributed-nav/playground/workload"
)

// DefaultPreset is the system the playground pages open on (the estimator
// page excepted): the card's case, an 8x RTX 4090 box on PCIe whose
// GeForce GPUs report no P2P.
const DefaultPreset = "rtx4090-8x"

// Option is one choice of a select control: the value the request takes
// and the label the page shows.
type Option struct {
	Value string `json:"value"`
	Label string `json:"label"`
}

// PageConstants are the defaults, limits and option lists the playground
// pages show. The generator writes them as an ES module the JavaScript
// imports (site/assets/gen/playground/constants.js), so that the pages
// restate none of them.
type PageConstants struct {
	NCCLVersion     string `json:"ncclVersion"`
	DefaultPreset   string `json:"defaultPreset"`
	EstimatorPreset string `json:"estimatorPreset"`
	Limits          Limits `json:"limits"`
	// Option lists: collectives, element types of the estimator, of the
	// step (gradients / parameters) and of FSDP's reduce and shard types
	// ("" is "same as the parameters"), networks, timings, parallelisms.
	Colls      []Option `json:"colls"`
	P2P        []Option `json:"p2p"`
	Dtypes     []Option `json:"dtypes"`
	StepDtypes []Option `json:"stepDtypes"`
	SameDtypes []Option `json:"sameDtypes"`
	Fabrics    []Option `json:"fabrics"`
	Timings    []Option `json:"timings"`
	Modes      []Option `json:"modes"`
	// GPUs are the GPUs the step can derive its compute from (value: the
	// name of data/gpus.csv; label: name, dense BF16 TFLOP/s and memory),
	// "" first for "give the compute times"; Optimizers the optimizers
	// whose state the memory estimate counts.
	GPUs       []Option `json:"gpus"`
	Optimizers []Option `json:"optimizers"`
	// GPUAliases maps every name and alias of data/gpus.csv, folded as
	// gpus.Lookup folds them (lower case, no spaces, '_' or '-'), to the
	// GPU's name, so that a link's ?gpu=rtx4090 selects what ncclsim step
	// --gpu rtx4090 uses.
	GPUAliases map[string]string `json:"gpuAliases"`
	// DefaultColl is the collective the algorithm page opens on (ncclsim
	// tune's default).
	DefaultColl string `json:"defaultColl"`
	// Estimate and Step are the inputs the estimator and step pages open
	// on; an input equal to its default is left out of the page's link and
	// of the ncclsim line.
	Estimate EstimateDefaults `json:"estimate"`
	Step     StepDefaults     `json:"step"`
	// Presets are the built-in systems the system pickers list, as
	// Service.Presets returns them: a page builds its inputs and asks its
	// first question while its module is still downloading.
	Presets []PresetInfo `json:"presets"`
}

// Limits are the input limits the pages check before they call the
// module (the service checks them again).
type Limits struct {
	XMLBytes     int `json:"xmlBytes"`
	Nodes        int `json:"nodes"`
	EnvVars      int `json:"envVars"`
	EnvLen       int `json:"envLen"`
	LogBytes     int `json:"logBytes"`
	EnvDumpBytes int `json:"envDumpBytes"`
	MaxChannels  int `json:"maxChannels"`
	// NCCLTestsBytes bounds the estimator's pasted nccl-tests output.
	NCCLTestsBytes int `json:"ncclTestsBytes"`
}

// EstimateDefaults are the estimator page's opening inputs.
type EstimateDefaults struct {
	Coll   string `json:"coll"`
	Bytes  string `json:"bytes"`
	Dtype  string `json:"dtype"`
	Fabric string `json:"fabric"`
}

// StepDefaults are the step page's opening inputs.
type StepDefaults struct {
	Mode            string `json:"mode"`
	Params          string `json:"params"`
	Dtype           string `json:"dtype"`
	Layers          string `json:"layers"`
	TensorsPerLayer string `json:"tensorsPerLayer"`
	ForwardMs       string `json:"forwardMs"`
	BackwardMs      string `json:"backwardMs"`
	OptimizerMs     string `json:"optimizerMs"`
	Timing          string `json:"timing"`
	// With a GPU: sequences per GPU, tokens per sequence, the fraction of
	// peak throughput and the optimizer.
	Batch     string `json:"batch"`
	SeqLen    string `json:"seqLen"`
	MFU       string `json:"mfu"`
	Optimizer string `json:"optimizer"`
}

// Constants returns the PageConstants of this build.
func Constants() PageConstants {
	colls := []Option{}
	for _, f := range []tune.Func{tune.AllReduce, tune.AllGather, tune.ReduceScatter, tune.Broadcast, tune.Reduce} {
		colls = append(colls, Option{Value: strings.ToLower(f.String()), Label: f.String()})
	}
	gpuOpts := []Option{{"", "none: give the compute times"}}
	aliases := map[string]string{}
	if list, err := gpus.All(); err == nil { // the table is compiled in; TestConstants checks it is read
		for _, g := range list {
			gpuOpts = append(gpuOpts, Option{Value: g.Name, Label: g.Name + " (" + strconv.FormatFloat(g.DenseBF16TFLOPS, 'f', -1, 64) + " dense BF16 TFLOP/s, " + strconv.FormatFloat(g.MemoryGB, 'f', -1, 64) + " GB)"})
			for _, a := range append([]string{g.Name}, g.Aliases...) {
				aliases[gpus.Fold(a)] = g.Name
			}
		}
	}
	systems, _ := New().Presets() // compiled in; TestConstantsPresets checks they are read
	return PageConstants{
		Presets:         systems,
		NCCLVersion:     NCCLVersion,
		DefaultPreset:   DefaultPreset,
		EstimatorPreset: EstimatorDefaultPreset,
		Limits: Limits{XMLBytes: MaxXMLBytes, Nodes: topo.MaxHosts, EnvVars: MaxEnvVars, EnvLen: MaxEnvLen,
			LogBytes: MaxLogBytes, EnvDumpBytes: MaxEnvDumpSize, MaxChannels: tune.MaxChannels, NCCLTestsBytes: MaxNCCLTestsBytes},
		Colls:       colls,
		DefaultColl: "allreduce",
		P2P:         []Option{{"auto", "from the topology"}, {"all", "all pairs"}, {"none", "none (GeForce)"}, {"nvlink", "NVLink pairs only"}},
		Dtypes:      []Option{{"float32", "float32"}, {"bfloat16", "bfloat16"}, {"float16", "float16"}, {"float64", "float64"}, {"int8", "int8"}},
		StepDtypes:  []Option{{"bf16", "bfloat16"}, {"fp16", "float16"}, {"fp32", "float32"}},
		SameDtypes:  []Option{{"", "same as the parameters"}, {"fp32", "float32"}, {"bf16", "bfloat16"}, {"fp16", "float16"}},
		Fabrics:     []Option{{"auto", "auto (from the NIC names)"}, {"rdma", "RDMA (InfiniBand, RoCE)"}, {"tcp", "TCP sockets"}},
		Timings:     []Option{{"calibrated", "calibrated (what runs measure)"}, {"model", "NCCL’s model"}},
		Modes:       []Option{{"ddp", "DDP (DistributedDataParallel)"}, {"fsdp", "FSDP2 (fully_shard)"}},
		GPUs:        gpuOpts,
		GPUAliases:  aliases,
		Optimizers: []Option{{string(workload.AdamW), "AdamW (two states)"}, {string(workload.Adam), "Adam (two states)"},
			{string(workload.SGDMomentum), "SGD with momentum (one state)"}, {string(workload.SGD), "SGD (no state)"}},
		Estimate: EstimateDefaults{Coll: DefaultEstimatorColl, Bytes: DefaultEstimatorBytes, Dtype: "float32", Fabric: "auto"},
		Step: StepDefaults{Mode: DefaultStep.Mode, Params: DefaultStep.Params, Dtype: "bf16", Layers: strconv.Itoa(DefaultLayers),
			TensorsPerLayer: strconv.Itoa(DefaultTensorsPerLayer), ForwardMs: DefaultStep.ForwardMs, BackwardMs: DefaultStep.BackwardMs,
			OptimizerMs: DefaultStep.OptimizerMs, Timing: "calibrated",
			Batch: strconv.Itoa(DefaultBatch), SeqLen: strconv.Itoa(DefaultSeqLen),
			MFU: strconv.FormatFloat(workload.DefaultUtilization, 'f', -1, 64), Optimizer: string(DefaultOptimizer)},
	}
}
