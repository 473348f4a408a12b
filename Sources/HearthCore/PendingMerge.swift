extension Node { var hashPendingMerge: String { fatalError() } }
