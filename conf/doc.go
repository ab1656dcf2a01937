// Package conf owns ramjet's configuration file: its schema and defaults,
// strict YAML decoding that reports every problem as FILE:LINE: message,
// semantic validation, and a Watcher that tells its owner when the file
// changed on disk.
//
// conf imports nothing of ours and does no work beyond reading and
// watching the one file; applying a configuration (listeners, cache,
// origins) is the caller's job. Only cmd imports conf: other packages take
// their own Config, which cmd fills from a *conf.Config.
package conf
