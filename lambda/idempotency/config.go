package idempotency

import (
	"strings"

	"github.com/idempotent-consumer/idempotent-consumer/lambda/env"
)

// ConfigFromEnv reads the Config that the IdempotentConsumer construct sets
// in the function's environment (see package env), through getenv (usually
// os.Getenv). Unset variables keep Config's defaults.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{Namespace: getenv(env.Namespace)}
	var err error
	if cfg.Window, err = env.Duration(getenv, env.Window); err != nil {
		return Config{}, err
	}
	if cfg.TTLAfterWindow, err = env.Duration(getenv, env.TTLAfterWindow); err != nil {
		return Config{}, err
	}
	if cfg.LeaseMax, err = env.Duration(getenv, env.LeaseMax); err != nil {
		return Config{}, err
	}
	if cfg.FinishBudget, err = env.Duration(getenv, env.FinishBudget); err != nil {
		return Config{}, err
	}
	if cfg.CacheSize, err = env.Int(getenv, env.CacheSize); err != nil {
		return Config{}, err
	}
	if s := getenv(env.PayloadIgnore); s != "" {
		cfg.PayloadIgnore = strings.Split(s, ",")
	}
	if s := getenv(env.KeySecret); s != "" {
		cfg.KeySecret = []byte(s)
	}
	return cfg, nil
}
