// Package fuzz holds rocekit's fuzz targets; it has no code of its own. Each
// target is a Go fuzz test and can be run alone, for example
//
//	go test -run '^$' -fuzz '^FuzzBTH$' -fuzztime 30s ./fuzz/
//
// There is one target per header constructor (FuzzBTH, FuzzRDETH, FuzzDETH,
// FuzzXRCETH, FuzzRETH, FuzzAtomicETH, FuzzAETH, FuzzAtomicAckETH, FuzzImmDt,
// FuzzIETH, FuzzFETH, FuzzCNP, FuzzLRH, FuzzGRH), one for the transport
// packet parser (FuzzPacket), two for frame parsing (FuzzFrameEthernet,
// FuzzFrameIB); FuzzPcapReader fuzzes the capture reader, FuzzCapture whole
// capture files through decoding, the per-QP tracker and the conformance
// checker, FuzzCM the CM MAD views, and FuzzReadHex, FuzzReadAXIS,
// FuzzReadAXISMem and FuzzReadMemh the stimulus text readers, FuzzDPI
// frames through librocekit's parser, scoreboard and peer. Each target
// checks that parsing never panics and, where it encodes, that whatever
// parses encodes back to the same bytes. The seed corpora are the ICRC test vectors of ib-facts.md §3.4
// and every frame of the captures in ../shared/captures when present.
package fuzz
