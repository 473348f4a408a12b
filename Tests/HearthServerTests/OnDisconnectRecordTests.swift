import HearthCore
@testable import HearthServer
import Testing

@Test func onDisconnectRecordsRoundTripThroughTheirText() throws {
    let records = [
        OnDisconnectRecord(path: "presence/ada", value: try Node(json: #"{".sv": "timestamp"}"#), isAdmin: false, auth: try Node(json: #"{"uid": "ada"}"#)),
        OnDisconnectRecord(path: "rooms/1/members/ada", value: try Node(json: #"{".priority": 2, "on": false}"#), isAdmin: false, auth: try Node(json: #"{"uid": "ada"}"#)),
        OnDisconnectRecord(path: "log", value: Node("bye \"quoted\" ✓"), isAdmin: true, auth: nil),
    ]
    #expect(OnDisconnectRecord.decode(OnDisconnectRecord.encode(records)) == records)
    // One merge per run of the same credential, in order, as the node itself would have run them.
    let groups = OnDisconnectQueue.groups(records)
    #expect(groups.count == 2)
    #expect(groups[0].values.map(\.0) == [Path("presence/ada"), Path("rooms/1/members/ada")])
    #expect(groups[0].caller.auth == (try Node(json: #"{"uid": "ada"}"#)) && !groups[0].caller.isAdmin)
    #expect(groups[1].caller.isAdmin)
}

@Test func damagedOnDisconnectTextIsRefusedNotGuessed() {
    for text in ["", "{", #"[{"v": 1}]"#, #"[{"p": "/a.b", "v": 1}]"#, #"[{"p": 3, "v": 1}]"#] {
        #expect(OnDisconnectRecord.decode(text) == nil, "\(text)")
    }
    #expect(OnDisconnectRecord.decode("[]") == [])
}
