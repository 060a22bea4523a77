import HTTPTypes

extension HTTPFields {
    /// `self[name]` — the value, or repeated fields' values joined with ", " — without the
    /// generic joining that subscript does for every lookup: the hot paths read several fields
    /// per request, and a name is nearly always there once or not at all.
    func value(_ name: HTTPField.Name) -> String? {
        var found: String?
        for field in self where field.name == name {
            guard found == nil else { return self[name] }
            found = field.value
        }
        return found
    }
}
