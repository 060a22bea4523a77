#if canImport(Glibc)
    import Glibc

    /// glibc's malloc serves blocks from 128 KiB up with their own mappings, but after the first of
    /// them is freed it raises that threshold to the block's size, so later ones come from its heaps
    /// and stay there once freed. An upload's 1 MiB reads then leave the server several MB larger for
    /// good (measured over six 100 MB uploads: anonymous memory from 6 MB to 10–20 MB; 6 to 7–8 MB
    /// with a fixed threshold). A threshold set explicitly stays where it is set. Measured where it
    /// matters by `scripts/bench/fleet`, whose server memory must stay flat across an upload.
    enum LargeAllocations {
        /// Blocks from 512 KiB up get mappings of their own, returned to the system when freed.
        static func returnToTheSystemWhenFreed() {
            // `mallopt` is not in Swift's Glibc module; `nil` is `RTLD_DEFAULT`.
            guard let symbol = dlsym(nil, "mallopt") else { return }
            let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
            let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD in <malloc.h>
            _ = mallopt(mmapThreshold, 512 * 1024)
        }
    }
#endif
