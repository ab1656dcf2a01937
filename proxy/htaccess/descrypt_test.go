package htaccess

import (
	"crypto/des"
	"math/rand/v2"
	"testing"
)

func bits(b []byte) (out [64]bool) {
	for i := range 64 {
		out[i] = b[i/8]&(0x80>>(i%8)) != 0
	}
	return out
}

func unbits(in [64]bool) []byte {
	out := make([]byte, 8)
	for i, v := range in {
		if v {
			out[i/8] |= 0x80 >> (i % 8)
		}
	}
	return out
}

// TestDESMatchesTheStandardLibrary: without a salt the cipher is DES.
func TestDESMatchesTheStandardLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		key, block := make([]byte, 8), make([]byte, 8)
		for i := range key {
			key[i], block[i] = byte(rng.Uint32()), byte(rng.Uint32())
		}
		c, err := des.NewCipher(key)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]byte, 8)
		c.Encrypt(want, block)
		ks := keySchedule(bits(key))
		if got := unbits(desEncrypt(bits(block), &ks, 0)); string(got) != string(want) {
			t.Fatalf("key %x block %x: %x, crypto/des %x", key, block, got, want)
		}
	}
}

func TestDESCryptAsHtpasswdWritesIt(t *testing.T) {
	for _, tt := range []struct{ pass, hash string }{
		{"letmein", "ZWLFrz9xbe5wk"}, // htpasswd -nbd erin letmein
		{"secret", "abNANd1rDfiNc"},  // crypt("secret", "ab")
	} {
		if got := desCrypt(tt.pass, tt.hash[:2]); got != tt.hash {
			t.Errorf("crypt(%q, %q) = %q, want %q", tt.pass, tt.hash[:2], got, tt.hash)
		}
		if !checkPassword(tt.hash, tt.pass) || checkPassword(tt.hash, tt.pass+"x") {
			t.Errorf("%s: checkPassword wrong", tt.hash)
		}
	}
}
