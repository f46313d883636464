package cloud

import "sync"

// RunConcurrently runs fn over items with at most workers at once and returns the first error
// after all have finished. The shared rate limiter still paces the calls; the point is to keep
// several batches in flight while others wait on the network.
func RunConcurrently[T any](items []T, workers int, fn func(T) error) error {
	if workers < 1 {
		workers = 1
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		slots    = make(chan struct{}, workers)
	)
	for _, item := range items {
		wg.Add(1)
		slots <- struct{}{}
		go func(item T) {
			defer wg.Done()
			defer func() { <-slots }()
			if err := fn(item); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}(item)
	}
	wg.Wait()
	return firstErr
}
