package etcd

import (
	"context"
	"log/slog"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// zapToSlog returns a zap logger (what the etcd client logs to) that writes
// its warnings and errors to l, so connection trouble shows up in
// lanleader's own log format. The client's info and debug chatter is
// dropped.
func zapToSlog(l *slog.Logger) *zap.Logger {
	return zap.New(&slogCore{l: l})
}

// slogCore is a zapcore.Core writing to a slog.Logger.
type slogCore struct {
	l      *slog.Logger
	fields []zapcore.Field
}

func (c *slogCore) Enabled(lvl zapcore.Level) bool { return lvl >= zapcore.WarnLevel }

func (c *slogCore) With(fs []zapcore.Field) zapcore.Core {
	return &slogCore{l: c.l, fields: append(append([]zapcore.Field(nil), c.fields...), fs...)}
}

func (c *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *slogCore) Write(e zapcore.Entry, fs []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range c.fields {
		f.AddTo(enc)
	}
	for _, f := range fs {
		f.AddTo(enc)
	}
	attrs := make([]slog.Attr, 0, len(enc.Fields))
	for k, v := range enc.Fields {
		attrs = append(attrs, slog.Any(k, v))
	}
	lvl := slog.LevelWarn
	if e.Level >= zapcore.ErrorLevel {
		lvl = slog.LevelError
	}
	c.l.LogAttrs(context.Background(), lvl, "etcd client: "+e.Message, attrs...)
	return nil
}

func (c *slogCore) Sync() error { return nil }
