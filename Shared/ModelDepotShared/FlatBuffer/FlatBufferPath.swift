/// Where in a flatbuffer a check failed, as `Model.subgraphs[0].tensors[3].name`.
///
/// Kept as a stack of components while verifying and only rendered when an error is thrown.
struct FlatBufferPath: Sendable, CustomStringConvertible {
    enum Component: Sendable {
        case field(String)
        case index(Int)
    }

    private(set) var components: [Component]

    init(root: String) {
        components = [.field(root)]
    }

    mutating func push(_ component: Component) { components.append(component) }
    mutating func pop() { components.removeLast() }

    var description: String {
        var text = ""
        for component in components {
            switch component {
            case .field(let name): text += text.isEmpty ? name : ".\(name)"
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }
}
