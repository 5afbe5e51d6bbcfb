package sim

// Chunks returns the number of event chunks the engine has allocated.
func Chunks(e *Engine) int { return e.chunks }
