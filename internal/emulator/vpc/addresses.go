package vpc

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// NextAddress hands out the vSwitch's next private address, for an instance, a NAT gateway or
// an internal load balancer; they share the one counter, so no two get the same address.
func (sw *VSwitch) NextAddress() string {
	pfx, err := netip.ParsePrefix(sw.CIDR)
	if err != nil {
		return ""
	}
	base := pfx.Masked().Addr().As4()
	n := binary.BigEndian.Uint32(base[:])
	sw.NextIP++
	// Skip the network address and the vendor-reserved first addresses.
	n += 2 + sw.NextIP
	var out [4]byte
	binary.BigEndian.PutUint32(out[:], n)
	return netip.AddrFrom4(out).String()
}

// vswitchCapacity is how many addresses a vSwitch of cidr can hand out (DescribeVSwitches'
// AvailableIpAddressCount before the instances in it are counted off).
func vswitchCapacity(cidr string) uint32 {
	pfx, err := netip.ParsePrefix(cidr)
	if err != nil {
		return 0
	}
	return uint32(1)<<(32-pfx.Bits()) - 6 // network, broadcast and vendor-reserved addresses
}

// PublicAddress makes a public-looking address (an EIP, an internet load balancer), unique per
// value of the state's sequence (core.Env.NextSeq).
func PublicAddress(seq uint64) string {
	return fmt.Sprintf("47.%d.%d.%d", 96+(seq>>16)&3, (seq>>8)&255, seq&255)
}
