#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The header fields a ``RequestSerializer`` sends by default, built as AFNetworking builds them.
public enum StandardHeaders {
    /// The version of this package, as `User-Agent` names it.
    public static let packageVersion = "0.1.0"

    /// `Accept-Language` for `languages` in order of preference, at most six, with falling
    /// q-values: `["fr-CH", "fr", "en"]` → `fr-CH;q=1, fr;q=0.9, en;q=0.8`.
    public static func acceptLanguage(_ languages: [String]) -> String {
        languages.prefix(6).enumerated().map { index, language in
            let quality = 10 - index
            return "\(language);q=" + (quality == 10 ? "1" : "0.\(quality)")
        }.joined(separator: ", ")
    }

    /// The user's preferred languages: on Linux from `LANGUAGE`, `LC_ALL`, `LC_MESSAGES` and
    /// `LANG` (`fr_CH.UTF-8` → `fr-CH`); on Apple platforms from `Locale.preferredLanguages`.
    /// `en` when none is set or the locale is `C`/`POSIX`.
    public static func preferredLanguages(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        #if canImport(Darwin)
        let languages = Locale.preferredLanguages
        #else
        let languages = posixLanguages(environment)
        #endif
        return languages.isEmpty ? ["en"] : languages
    }

    static func posixLanguages(_ environment: [String: String]) -> [String] {
        var names: [String] = []
        if let list = environment["LANGUAGE"], !list.isEmpty { names += list.split(separator: ":").map(String.init) }
        if let locale = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap({ environment[$0] }).first(where: { !$0.isEmpty }) { names.append(locale) }
        var languages: [String] = []
        for name in names {
            let base = name.split(separator: ".").first.map(String.init) ?? name
            let tag = (base.split(separator: "@").first.map(String.init) ?? base).map { $0 == "_" ? "-" : $0 }.reduce(into: "") { $0.append($1) }
            guard !tag.isEmpty, tag != "C", tag != "POSIX", !languages.contains(tag) else { continue }
            languages.append(tag)
        }
        return languages
    }

    /// `User-Agent` naming the package and the platform: `FormPost/0.1.0 (Linux 6.1.0; x86_64)`.
    public static var userAgent: String {
        let version = ProcessInfo.processInfo.operatingSystemVersion
        return "FormPost/\(packageVersion) (\(platformName) \(version.majorVersion).\(version.minorVersion).\(version.patchVersion); \(architecture))"
    }

    /// `Accept-Language` and `User-Agent` for this process.
    public static var defaults: HTTPFields {
        [.acceptLanguage: acceptLanguage(preferredLanguages()), .userAgent: userAgent]
    }

    private static var platformName: String {
        #if os(macOS)
        return "macOS"
        #elseif os(iOS)
        return "iOS"
        #elseif os(tvOS)
        return "tvOS"
        #elseif os(watchOS)
        return "watchOS"
        #elseif os(visionOS)
        return "visionOS"
        #elseif os(Linux)
        return "Linux"
        #elseif os(Windows)
        return "Windows"
        #else
        return "Unknown"
        #endif
    }

    private static var architecture: String {
        #if arch(x86_64)
        return "x86_64"
        #elseif arch(arm64)
        return "arm64"
        #else
        return "unknown"
        #endif
    }
}
