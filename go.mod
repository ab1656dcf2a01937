module github.com/ramjet-proxy/ramjet

go 1.26.8

require (
	github.com/VictoriaMetrics/metrics v1.45.0
	github.com/allegro/bigcache/v3 v3.1.0
	github.com/fsnotify/fsnotify v1.10.1
	github.com/maypok86/otter/v2 v2.4.0
	github.com/molecule-man/go-brrr v1.3.1
	github.com/redis/go-redis/v9 v9.23.0
	github.com/valyala/fasthttp v1.78.0
	github.com/yookoala/gofast v0.8.0
	golang.org/x/crypto v0.58.0
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.49.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/fastrand v1.1.0 // indirect
	github.com/valyala/histogram v1.2.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	golang.org/x/tools/godoc v0.1.0-deprecated // indirect
)
