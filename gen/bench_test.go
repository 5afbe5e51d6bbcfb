package gen

import (
	"io"
	"testing"

	"github.com/rocekit/rocekit/roce"
)

// benchScenario streams 64-byte RDMA WRITEs (one frame each, AckReq on
// every one, so one ACK each): the small-frame case that stresses
// per-frame costs.
func benchScenario(n int64) *roce.Scenario {
	sc, err := roce.ParseScenario([]byte(`{"seed": 1, "hosts": [{"name": "a"}, {"name": "b"}],
	  "links": [{"a": "a", "b": "b", "bandwidth_gbps": 100, "delay_ns": 1000}],
	  "qps": [{"from": "a", "to": "b", "mtu": 1024, "outstanding": 64, "work": {"op": "write", "count": 1, "size": 64}}]}`))
	if err != nil {
		panic(err)
	}
	sc.QPs[0].Work.Count = n
	return sc
}

var benchSources = map[int64]*Source{}

func benchSource(b *testing.B, n int64) *Source {
	if s := benchSources[n]; s != nil {
		return s
	}
	s, err := FromScenario(benchScenario(n), ScenarioOptions{})
	if err != nil {
		b.Fatal(err)
	}
	benchSources[n] = s
	return s
}

// BenchmarkGenerate measures the generation loop (faults, golden model,
// stream and manifest writing) on 100,000 64-byte WRITEs, writing to
// io.Discard; frames/s counts the frames of both streams.
func BenchmarkGenerate(b *testing.B) {
	src := benchSource(b, 100000)
	for _, c := range []struct {
		name, format string
		manifest     bool
	}{{"pcap", "pcap", true}, {"hex", "hex", true}, {"pcap-nomanifest", "pcap", false}, {"hex-nomanifest", "hex", false}} {
		b.Run(c.name, func(b *testing.B) {
			frames := 0
			for b.Loop() {
				var man io.Writer
				if c.manifest {
					man = io.Discard
				}
				res, err := WriteTo(src, Options{Seed: 1}, Output{Format: c.format}, []io.Writer{io.Discard}, []io.Writer{io.Discard}, man, nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				frames += res.In + res.Out
			}
			b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}

// BenchmarkFromScenario measures the source: the simulator run on a
// fault-free link and the frames kept.
func BenchmarkFromScenario(b *testing.B) {
	frames := 0
	for b.Loop() {
		s, err := FromScenario(benchScenario(100000), ScenarioOptions{})
		if err != nil {
			b.Fatal(err)
		}
		frames += len(s.Frames)
	}
	b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkBuildFrames measures the frame builder of packet lists: one
// RDMA WRITE Only of 64 bytes (RoCEv2/IPv4, RETH, ICRC), repeated, each
// with the next PSN: the frames bench/gen_scapy.sh has scapy build.
func BenchmarkBuildFrames(b *testing.B) {
	const n = 100000
	list := []byte(`[{"opcode": "RC_RDMA_WRITE_ONLY", "payload": {"len": 64}, "repeat": 100000}]`)
	frames := 0
	for b.Loop() {
		src, err := ParsePackets(list)
		if err != nil {
			b.Fatal(err)
		}
		frames += len(src.Frames)
	}
	if frames != b.N*n {
		b.Fatalf("%d frames", frames)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
	b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
}
