#if canImport(CoreVideo)
    import CoreVideo
    import ModelDepotShared

    extension CameraFrame {
        /// The upright RGB image of a camera's `CVPixelBuffer` (32BGRA, or 420f/420v NV12), read in
        /// place while the buffer is locked: no plane is copied into an array.
        /// - Parameters:
        ///   - buffer: The frame, as `AVCaptureVideoDataOutput` delivers it.
        ///   - orientation: What stands the frame upright.
        /// - Throws: `DepotError` (`invalid_image`) for another pixel format or planes that do not hold their rows.
        public static func upright(_ buffer: CVPixelBuffer, orientation: FrameOrientation) throws(DepotError) -> PixelBuffer {
            let matrix = CVBufferCopyAttachment(buffer, kCVImageBufferYCbCrMatrixKey, nil) as? String
            let (format, space, range) = try layout(pixelFormat: CVPixelBufferGetPixelFormatType(buffer), matrix: matrix)
            CVPixelBufferLockBaseAddress(buffer, .readOnly)
            defer { CVPixelBufferUnlockBaseAddress(buffer, .readOnly) }
            let planes: [PlaneView] =
                CVPixelBufferIsPlanar(buffer)
                ? (0..<CVPixelBufferGetPlaneCount(buffer)).map { plane in
                    let stride = CVPixelBufferGetBytesPerRowOfPlane(buffer, plane)
                    return PlaneView(
                        bytes: UnsafeRawBufferPointer(
                            start: CVPixelBufferGetBaseAddressOfPlane(buffer, plane),
                            count: stride * CVPixelBufferGetHeightOfPlane(buffer, plane)), rowStride: stride)
                }
                : [
                    PlaneView(
                        bytes: UnsafeRawBufferPointer(
                            start: CVPixelBufferGetBaseAddress(buffer),
                            count: CVPixelBufferGetBytesPerRow(buffer) * CVPixelBufferGetHeight(buffer)),
                        rowStride: CVPixelBufferGetBytesPerRow(buffer))
                ]
            return try upright(
                width: CVPixelBufferGetWidth(buffer), height: CVPixelBufferGetHeight(buffer), format: format, planes: planes,
                colorSpace: space, colorRange: range, orientation: orientation)
        }
    }
#endif
