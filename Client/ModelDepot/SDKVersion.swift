import ModelDepotShared

/// The SDK's version (SemVer), sent with every manifest check as `Depot-SDK-Version` unless the
/// app sets ``ModelDownloaderConfiguration/device``'s `sdkVersion`. CHANGELOG.md lists what each
/// version changed and whether it breaks an app's build.
public let modelDepotSDKVersion = modelDepotVersion
