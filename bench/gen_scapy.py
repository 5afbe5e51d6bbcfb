"""Build N RoCEv2 RC RDMA WRITE Only frames with scapy, as `rocekit gen`
builds them from the packet list bench/gen_scapy.sh writes: Ethernet
02:00:00:00:00:01 -> :02, IPv4 192.168.1.1 -> .2 (TOS 2, TTL 64, DF, ID 0),
UDP 0xC132 -> 4791 (checksum 0), BTH opcode 0x0A P_Key 0xFFFF DestQP 0x12
AckReq PSN i, RETH VA 0x10000000 R_Key 0x100 length 64, 64 zero bytes,
ICRC computed by scapy.contrib.roce.

usage: /usr/bin/python3 bench/gen_scapy.py N HEXFILE
Prints "frames seconds ns_per_frame" and writes the frames as hex lines
to HEXFILE (written after the timed loop)."""
import sys
import time

from scapy.all import IP, UDP, Ether, Raw
from scapy.contrib.roce import BTH

n = int(sys.argv[1])
reth = bytes.fromhex("0000000010000000" "00000100" "00000040")
payload = bytes(64)
frames = []
t0 = time.perf_counter()
for i in range(n):
    p = (Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:01")
         / IP(src="192.168.1.1", dst="192.168.1.2", tos=2, ttl=64, id=0, flags="DF")
         / UDP(sport=0xC132, dport=4791, chksum=0)
         / BTH(opcode=0x0A, pkey=0xFFFF, dqpn=0x12, ackreq=1, psn=i)
         / Raw(reth + payload))
    frames.append(bytes(p))
dt = time.perf_counter() - t0
with open(sys.argv[2], "w") as f:
    for b in frames:
        f.write(b.hex() + "\n")
print(f"{n} {dt:.3f} {dt / n * 1e9:.0f}")
