package htaccess

// desCrypt is the traditional Unix crypt(3) that "htpasswd -d" writes:
// DES with the expansion perturbed by a 12-bit salt, encrypting a zero
// block 25 times under the password's first 8 characters. Written from
// FIPS 46-3 (tables in its 1-based, most-significant-bit-first
// notation); TestDESMatchesTheStandardLibrary checks the cipher against
// crypto/des. Slow and simple: a verified password is remembered.
func desCrypt(pass, salt string) string {
	if len(salt) < 2 {
		return ""
	}
	var key [64]bool
	for i := 0; i < 8 && i < len(pass); i++ {
		c := pass[i] << 1
		for b := 0; b < 8; b++ {
			key[i*8+b] = c&(0x80>>b) != 0
		}
	}
	sv := a64(salt[0]) | a64(salt[1])<<6
	ks := keySchedule(key)
	var block [64]bool
	for i := 0; i < 25; i++ {
		block = desEncrypt(block, &ks, sv)
	}
	out := []byte(salt[:2])
	for i := 0; i < 66; i += 6 {
		v := 0
		for b := 0; b < 6; b++ {
			v <<= 1
			if i+b < 64 && block[i+b] {
				v |= 1
			}
		}
		out = append(out, itoa64[v])
	}
	return string(out)
}

// a64 is a salt character's value in crypt's alphabet.
func a64(c byte) uint32 {
	switch {
	case c >= 'a':
		return uint32(c-'a') + 38
	case c >= 'A':
		return uint32(c-'A') + 12
	case c >= '.':
		return uint32(c - '.')
	}
	return 0
}

func keySchedule(key [64]bool) [16][48]bool {
	var cd [56]bool
	for i, p := range pc1 {
		cd[i] = key[p-1]
	}
	var ks [16][48]bool
	for r := 0; r < 16; r++ {
		for s := 0; s < shifts[r]; s++ {
			c0, d0 := cd[0], cd[28]
			copy(cd[0:27], cd[1:28])
			copy(cd[28:55], cd[29:56])
			cd[27], cd[55] = c0, d0
		}
		for i, p := range pc2 {
			ks[r][i] = cd[p-1]
		}
	}
	return ks
}

// desEncrypt encrypts one block; bit i of salt set swaps expansion
// outputs i and i+24 (crypt's perturbation; 0 for plain DES).
func desEncrypt(in [64]bool, ks *[16][48]bool, salt uint32) [64]bool {
	var lr [64]bool
	for i, p := range ip {
		lr[i] = in[p-1]
	}
	l, r := lr[:32], lr[32:]
	for round := 0; round < 16; round++ {
		var e [48]bool
		for i, p := range expansion {
			e[i] = r[p-1]
		}
		for i := 0; i < 12; i++ {
			if salt&(1<<i) != 0 {
				e[i], e[i+24] = e[i+24], e[i]
			}
		}
		var f [32]bool
		for s := 0; s < 8; s++ {
			var x [6]bool
			for i := range x {
				x[i] = e[s*6+i] != ks[round][s*6+i]
			}
			row := b2i(x[0])<<1 | b2i(x[5])
			col := b2i(x[1])<<3 | b2i(x[2])<<2 | b2i(x[3])<<1 | b2i(x[4])
			v := sboxes[s][row][col]
			for i := 0; i < 4; i++ {
				f[s*4+i] = v&(8>>i) != 0
			}
		}
		var nr [32]bool
		for i, p := range pbox {
			nr[i] = l[i] != f[p-1]
		}
		copy(l, r)
		copy(r, nr[:])
	}
	var pre [64]bool
	copy(pre[:32], r)
	copy(pre[32:], l)
	var out [64]bool
	for i, p := range fp {
		out[i] = pre[p-1]
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

var ip = [64]uint8{
	58, 50, 42, 34, 26, 18, 10, 2, 60, 52, 44, 36, 28, 20, 12, 4,
	62, 54, 46, 38, 30, 22, 14, 6, 64, 56, 48, 40, 32, 24, 16, 8,
	57, 49, 41, 33, 25, 17, 9, 1, 59, 51, 43, 35, 27, 19, 11, 3,
	61, 53, 45, 37, 29, 21, 13, 5, 63, 55, 47, 39, 31, 23, 15, 7,
}

var fp = [64]uint8{
	40, 8, 48, 16, 56, 24, 64, 32, 39, 7, 47, 15, 55, 23, 63, 31,
	38, 6, 46, 14, 54, 22, 62, 30, 37, 5, 45, 13, 53, 21, 61, 29,
	36, 4, 44, 12, 52, 20, 60, 28, 35, 3, 43, 11, 51, 19, 59, 27,
	34, 2, 42, 10, 50, 18, 58, 26, 33, 1, 41, 9, 49, 17, 57, 25,
}

var expansion = [48]uint8{
	32, 1, 2, 3, 4, 5, 4, 5, 6, 7, 8, 9, 8, 9, 10, 11, 12, 13, 12, 13, 14, 15, 16, 17,
	16, 17, 18, 19, 20, 21, 20, 21, 22, 23, 24, 25, 24, 25, 26, 27, 28, 29, 28, 29, 30, 31, 32, 1,
}

var pbox = [32]uint8{
	16, 7, 20, 21, 29, 12, 28, 17, 1, 15, 23, 26, 5, 18, 31, 10,
	2, 8, 24, 14, 32, 27, 3, 9, 19, 13, 30, 6, 22, 11, 4, 25,
}

var pc1 = [56]uint8{
	57, 49, 41, 33, 25, 17, 9, 1, 58, 50, 42, 34, 26, 18,
	10, 2, 59, 51, 43, 35, 27, 19, 11, 3, 60, 52, 44, 36,
	63, 55, 47, 39, 31, 23, 15, 7, 62, 54, 46, 38, 30, 22,
	14, 6, 61, 53, 45, 37, 29, 21, 13, 5, 28, 20, 12, 4,
}

var pc2 = [48]uint8{
	14, 17, 11, 24, 1, 5, 3, 28, 15, 6, 21, 10, 23, 19, 12, 4, 26, 8, 16, 7, 27, 20, 13, 2,
	41, 52, 31, 37, 47, 55, 30, 40, 51, 45, 33, 48, 44, 49, 39, 56, 34, 53, 46, 42, 50, 36, 29, 32,
}

var shifts = [16]int{1, 1, 2, 2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 2, 1}

var sboxes = [8][4][16]uint8{
	{{14, 4, 13, 1, 2, 15, 11, 8, 3, 10, 6, 12, 5, 9, 0, 7}, {0, 15, 7, 4, 14, 2, 13, 1, 10, 6, 12, 11, 9, 5, 3, 8},
		{4, 1, 14, 8, 13, 6, 2, 11, 15, 12, 9, 7, 3, 10, 5, 0}, {15, 12, 8, 2, 4, 9, 1, 7, 5, 11, 3, 14, 10, 0, 6, 13}},
	{{15, 1, 8, 14, 6, 11, 3, 4, 9, 7, 2, 13, 12, 0, 5, 10}, {3, 13, 4, 7, 15, 2, 8, 14, 12, 0, 1, 10, 6, 9, 11, 5},
		{0, 14, 7, 11, 10, 4, 13, 1, 5, 8, 12, 6, 9, 3, 2, 15}, {13, 8, 10, 1, 3, 15, 4, 2, 11, 6, 7, 12, 0, 5, 14, 9}},
	{{10, 0, 9, 14, 6, 3, 15, 5, 1, 13, 12, 7, 11, 4, 2, 8}, {13, 7, 0, 9, 3, 4, 6, 10, 2, 8, 5, 14, 12, 11, 15, 1},
		{13, 6, 4, 9, 8, 15, 3, 0, 11, 1, 2, 12, 5, 10, 14, 7}, {1, 10, 13, 0, 6, 9, 8, 7, 4, 15, 14, 3, 11, 5, 2, 12}},
	{{7, 13, 14, 3, 0, 6, 9, 10, 1, 2, 8, 5, 11, 12, 4, 15}, {13, 8, 11, 5, 6, 15, 0, 3, 4, 7, 2, 12, 1, 10, 14, 9},
		{10, 6, 9, 0, 12, 11, 7, 13, 15, 1, 3, 14, 5, 2, 8, 4}, {3, 15, 0, 6, 10, 1, 13, 8, 9, 4, 5, 11, 12, 7, 2, 14}},
	{{2, 12, 4, 1, 7, 10, 11, 6, 8, 5, 3, 15, 13, 0, 14, 9}, {14, 11, 2, 12, 4, 7, 13, 1, 5, 0, 15, 10, 3, 9, 8, 6},
		{4, 2, 1, 11, 10, 13, 7, 8, 15, 9, 12, 5, 6, 3, 0, 14}, {11, 8, 12, 7, 1, 14, 2, 13, 6, 15, 0, 9, 10, 4, 5, 3}},
	{{12, 1, 10, 15, 9, 2, 6, 8, 0, 13, 3, 4, 14, 7, 5, 11}, {10, 15, 4, 2, 7, 12, 9, 5, 6, 1, 13, 14, 0, 11, 3, 8},
		{9, 14, 15, 5, 2, 8, 12, 3, 7, 0, 4, 10, 1, 13, 11, 6}, {4, 3, 2, 12, 9, 5, 15, 10, 11, 14, 1, 7, 6, 0, 8, 13}},
	{{4, 11, 2, 14, 15, 0, 8, 13, 3, 12, 9, 7, 5, 10, 6, 1}, {13, 0, 11, 7, 4, 9, 1, 10, 14, 3, 5, 12, 2, 15, 8, 6},
		{1, 4, 11, 13, 12, 3, 7, 14, 10, 15, 6, 8, 0, 5, 9, 2}, {6, 11, 13, 8, 1, 4, 10, 7, 9, 5, 0, 15, 14, 2, 3, 12}},
	{{13, 2, 8, 4, 6, 15, 11, 1, 10, 9, 3, 14, 5, 0, 12, 7}, {1, 15, 13, 8, 10, 3, 7, 4, 12, 5, 6, 11, 0, 14, 9, 2},
		{7, 11, 4, 1, 9, 12, 14, 2, 0, 6, 10, 13, 15, 3, 5, 8}, {2, 1, 14, 7, 4, 10, 8, 13, 15, 12, 9, 0, 3, 5, 6, 11}},
}
