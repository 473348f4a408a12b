// Loaded with LD_PRELOAD by the fault tests (docs/reliability.md); nothing to call from Swift.
