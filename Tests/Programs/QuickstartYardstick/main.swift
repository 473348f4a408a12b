// The calls of Firebase's quickstart-ios database samples (DatabaseExampleSwift and DatabaseExampleSwiftUI:
// every FirebaseCore, FirebaseAuth and FirebaseDatabase call outside UIKit, SwiftUI and FirebaseUI),
// written here with the same names, labels and types, against HearthClient: posts with a fan-out update,
// users, recent/my/top lists with queries, comments heard through child events, stars by transaction,
// profiles, and signing in and out. HearthClientTests run it against a real `hearth serve`.
//
//   quickstart-yardstick     reads HEARTH_DATABASE_URL, HEARTH_API_KEY and HEARTH_PROJECT_ID
//                            (FirebaseApp.configure()'s environment); prints "ok: <step>" per step and
//                            "quickstart: done", or "FAIL: …" and exits 1
//
// The samples' own code stays theirs: this program is written from the list of calls they make.
import Dispatch
import Foundation
import HearthClient
import HearthSupport

struct Failure: Error, CustomStringConvertible {
    let description: String
}

func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

func check(_ condition: Bool, _ what: String) throws {
    guard condition else { throw Failure(description: what) }
    say("ok: \(what)")
}

/// A completion-block call, awaited: the samples use the block forms; the program waits for each.
func completion<Value: Sendable>(_ start: (@escaping @Sendable (Value) -> Void) -> Void) async -> Value {
    await withCheckedContinuation { continuation in start { continuation.resume(returning: $0) } }
}

/// The UIKit sample's post, built from a snapshot as it builds it.
struct Post {
    let uid: String, author: String, title: String, body: String
    let starCount: Int
    let stars: [String: Bool]

    init?(snapshot: DataSnapshot) {
        guard let dict = snapshot.value as? [String: Any], let uid = dict["uid"] as? String, let author = dict["author"] as? String,
            let title = dict["title"] as? String, let body = dict["body"] as? String
        else { return nil }
        (self.uid, self.author, self.title, self.body) = (uid, author, title, body)
        starCount = dict["starCount"] as? Int ?? 0
        stars = dict["stars"] as? [String: Bool] ?? [:]
    }
}

/// The samples' star toggle, in a transaction on the post (and again on the author's copy).
func incrementStars(for ref: DatabaseReference) async -> (Error?, Bool, DataSnapshot?) {
    await withCheckedContinuation { continuation in
        ref.runTransactionBlock({ (currentData: MutableData) -> TransactionResult in
            if var post = currentData.value as? [String: AnyObject], let uid = Auth.auth().currentUser?.uid {
                var stars: [String: Bool] = post["stars"] as? [String: Bool] ?? [:]
                var starCount = post["starCount"] as? Int ?? 0
                if stars[uid] != nil {
                    starCount -= 1
                    stars.removeValue(forKey: uid)
                } else {
                    starCount += 1
                    stars[uid] = true
                }
                post["starCount"] = starCount as AnyObject?
                post["stars"] = stars as AnyObject?
                currentData.value = post
                return TransactionResult.success(withValue: currentData)
            }
            return TransactionResult.success(withValue: currentData)
        }) { error, committed, snapshot in
            continuation.resume(returning: (error, committed, snapshot))
        }
    }
}

// The samples' writes are fire-and-forget calls from synchronous code (button actions, SwiftUI closures).
// Inside an async function Swift picks the async overload instead (SE-0296), in Firebase's SDK as here,
// so they stay in synchronous functions of their own, as in the samples.
func writeUsername(_ ref: DatabaseReference, uid: String, username: String) {
    ref.child("users").child(uid).setValue(["username": username])
}

func fanOut(_ ref: DatabaseReference, _ childUpdates: [String: Any]) { ref.updateChildValues(childUpdates) }

func postComment(_ ref: DatabaseReference, _ comment: [String: String]) { ref.setValue(comment) }

func deleteComment(_ snapshot: DataSnapshot) { snapshot.ref.removeValue() }

func fireAndForget(_ ref: DatabaseReference, _ value: String) { ref.setValue(value) }

func main() async throws {
    FirebaseApp.configure()
    let ref: DatabaseReference = Database.database().reference()
    let auth = Auth.auth()
    let suffix = UUID().uuidString.prefix(8).lowercased()

    // Sign up (the UIKit sign-in screen): createUser, then a profile change whose completion writes users/<uid>.
    let email = "quick-\(suffix)@example.com"
    let created: (AuthDataResult?, Error?) = await completion { done in
        auth.createUser(withEmail: email, password: "secret123", completion: { authResult, error in done((authResult, error)) })
    }
    guard let user: User = created.0?.user else { throw Failure(description: "createUser: \(String(describing: created.1))") }
    try check(auth.currentUser != nil && user.uid == auth.currentUser?.uid, "createUser(withEmail:password:completion:) signs in")
    let changeRequest = auth.currentUser?.createProfileChangeRequest()
    changeRequest?.displayName = "quick \(suffix)"
    let committed: Error? = await completion { done in changeRequest?.commitChanges { error in done(error) } }
    try check(committed == nil && auth.currentUser?.displayName == "quick \(suffix)", "createProfileChangeRequest().commitChanges")
    writeUsername(ref, uid: user.uid, username: "quick\(suffix)")

    // Sign out and in again (TabBarController, SignInViewController).
    try auth.signOut()
    try check(auth.currentUser == nil, "signOut()")
    let signedIn: (AuthDataResult?, Error?) = await completion { done in
        auth.signIn(withEmail: email, password: "secret123") { result, error in done((result, error)) }
    }
    try check(signedIn.0?.user.uid == user.uid, "signIn(withEmail:password:) with a trailing completion")
    let uid = try require(auth.currentUser?.uid, "currentUser after signIn")
    let userSnapshot: DataSnapshot = await completion { done in
        ref.child("users").child(uid).observeSingleEvent(of: .value, with: { snapshot in done(snapshot) })
    }
    try check(userSnapshot.exists() && (userSnapshot.value as? NSDictionary)?["username"] as? String == "quick\(suffix)",
              "observeSingleEvent(of:with:) reads users/<uid>")

    // New posts (NewPostViewController, PostListViewModel): a key from childByAutoId, one fan-out update.
    var keys: [String] = []
    for index in 0..<3 {
        let username: String = await completion { done in
            ref.child("users").child(uid).observeSingleEvent(of: .value, with: { snapshot in
                let value = snapshot.value as? NSDictionary
                done(value?["username"] as? String ?? "")
            }) { error in
                say("observeSingleEvent cancelled: \(error.localizedDescription)")
                done("")
            }
        }
        guard let key = ref.child("posts").childByAutoId().key else { throw Failure(description: "childByAutoId().key is nil") }
        let post = ["uid": uid, "author": index == 2 ? (auth.currentUser?.email ?? "") : username, "title": "Post \(index)", "body": "Body \(index)"]
        let childUpdates = ["/posts/\(key)": post, "/user-posts/\(uid)/\(key)/": post]
        fanOut(ref, childUpdates)
        keys.append(key)
    }
    // The SwiftUI form: author from currentUser?.email (an optional in the dictionary).
    if let key = ref.child("posts").childByAutoId().key {
        let post: [String: String?] = ["uid": uid, "author": auth.currentUser?.email, "title": "Optional author", "body": "b"]
        fanOut(ref, ["/posts/\(key)": post, "/user-posts/\(uid)/\(key)/": post])
        keys.append(key)
    }
    let mine: DataSnapshot = await completion { done in
        ref.child("user-posts").child(uid).observeSingleEvent(of: .value, with: { done($0) })
    }
    try check(mine.childrenCount == 4, "updateChildValues fans a post out to posts/ and user-posts/")

    // The lists: recent (queryLimited(toFirst:)), mine (user-posts/<uid>), top (queryOrdered(byChild:)).
    let recentQuery: DatabaseQuery = ref.child("posts").queryLimited(toFirst: 100)
    let recent: DataSnapshot = await completion { done in recentQuery.observeSingleEvent(of: .value, with: { done($0) }) }
    let recentPosts = recent.children.compactMap { ($0 as? DataSnapshot).flatMap(Post.init(snapshot:)) }
    try check(recentPosts.count == 4 && recentPosts.first?.title == "Post 0", "queryLimited(toFirst:) lists the posts, oldest first")
    let myPosts: DatabaseQuery = ref.child("user-posts").child(uid)
    var handle: DatabaseHandle = 0
    let listed: Int = await completion { done in
        handle = myPosts.observe(.value, with: { snapshot in done(Int(snapshot.childrenCount)) })
    }
    myPosts.removeObserver(withHandle: handle)
    try check(listed == 4, "observe(.value) on user-posts/<uid>, then removeObserver(withHandle:)")

    // The SwiftUI list: the whole node as [String: [String: Any]], sorted in memory.
    let all: DataSnapshot = await completion { done in ref.child("posts").observeSingleEvent(of: .value, with: { done($0) }) }
    let dicts = all.value as? [String: [String: Any]] ?? [:]
    try check(dicts.keys.sorted(by: >).first == keys.last, "snapshot.value as? [String: [String: Any]]")

    // Stars (PostTableViewCell, PostViewModel): a transaction on the post, then on the author's copy.
    let postRef = ref.child("posts").child(keys[0])
    let starred = await incrementStars(for: postRef)
    try check(starred.0 == nil && starred.1 && (starred.2?.value as? [String: Any])?["starCount"] as? Int == 1,
              "runTransactionBlock(_:andCompletionBlock:) stars a post")
    let author: DataSnapshot = await completion { done in postRef.observeSingleEvent(of: .value, with: { done($0) }) }
    let authorUid = (author.value as? [String: Any])?["uid"] as? String ?? ""
    let userPost = await incrementStars(for: ref.child("user-posts").child(authorUid).child(keys[0]))
    try check(userPost.1, "the same transaction on user-posts/<author>/<id>")
    let unstarred = await incrementStars(for: postRef)
    try check(unstarred.1 && (unstarred.2?.value as? [String: Any])?["starCount"] as? Int == 0, "a second run takes the star back")
    let (asyncSnapshot, _) = await postRef.observeSingleEventAndPreviousSiblingKey(of: .value)
    try check(Post(snapshot: asyncSnapshot)?.starCount == 0, "await observeSingleEventAndPreviousSiblingKey(of:)")
    _ = await incrementStars(for: ref.child("user-posts").child(authorUid).child(keys[1]))
    let top: DatabaseQuery = ref.child("user-posts").child(uid).queryOrdered(byChild: "starCount")
    let ordered: DataSnapshot = await completion { done in top.observeSingleEvent(of: .value, with: { done($0) }) }
    let order = ordered.children.compactMap { ($0 as? DataSnapshot)?.key }
    try check(order.last == keys[1], "queryOrdered(byChild: \"starCount\") puts the starred post last")

    // Comments (PostDetailTableViewController, PostViewModel): child events, and a post's value.
    let commentsRef = ref.child("post-comments").child(keys[0])
    let added = Locked<[String]>([])
    let removed = Locked<[String]>([])
    let addedAll = DispatchSemaphore(value: 0)
    let removedOne = DispatchSemaphore(value: 0)
    commentsRef.observe(.childAdded, with: { (snapshot) -> Void in
        if added.withLock({ $0.append(snapshot.key); return $0.count }) == 2 { addedAll.signal() }
    })
    commentsRef.observe(.childRemoved, with: { (snapshot) -> Void in
        removed.withLock { $0.append(snapshot.key) }
        removedOne.signal()
    })
    var refHandle: DatabaseHandle = 0
    let postValue: Bool = await completion { done in
        refHandle = postRef.observe(DataEventType.value, with: { snapshot in done(snapshot.exists()) })
    }
    let comment = ["uid": uid, "author": "quick\(suffix)", "text": "First!"]
    postComment(commentsRef.childByAutoId(), comment)
    guard let commentKey = commentsRef.childByAutoId().key else { throw Failure(description: "no comment key") }
    postComment(commentsRef.child(commentKey), ["uid": uid, "author": "quick\(suffix)", "text": "Second"])
    let heard = await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: addedAll.wait(timeout: .now() + 30) == .success) }
    }
    try check(postValue && heard && added.withLock({ $0 }).last == commentKey, "observe(.childAdded) hears both comments, in order")
    let secondComment: DataSnapshot = await completion { done in
        commentsRef.child(commentKey).observeSingleEvent(of: .value, with: { done($0) })
    }
    deleteComment(secondComment)
    let removal = await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: removedOne.wait(timeout: .now() + 30) == .success) }
    }
    try check(removal && removed.withLock({ $0 }) == [commentKey], "snapshot.ref.removeValue() raises .childRemoved")
    postRef.removeObserver(withHandle: refHandle)
    commentsRef.removeAllObservers()
    ref.child("users").child(uid).removeAllObservers()
    ref.removeAllObservers()

    // Not in the samples but what their code relies on: a refused write throws, and createUser's result
    // has its user, in a main.swift written as an async function (docs/swift-sdk.md, "Top-level code").
    do {
        try await ref.child("locked").setValue("nope")
        throw Failure(description: "a write the rules refuse was accepted")
    } catch let error as NSError where error.domain == "com.firebase" {
        try check(error.code == 1, "try await setValue throws permission_denied on a refused write")
    }
    // The same refusal of a fire-and-forget write (no completion) is reverted locally and logged, as
    // FirebaseDatabase logs it: the test reads "setValue: or removeValue: at /locked failed" on stderr.
    let lockedRef = ref.child("locked")
    let seen = Locked<(history: [Bool], answered: Bool)>(([], false))
    let reverted: Bool = await completion { done in
        lockedRef.observe(.value, with: { snapshot in
            // The local write shows (perhaps as the first event), then the refusal takes it back.
            let answer = seen.withLock { state -> Bool in
                state.history.append(snapshot.exists())
                guard !state.answered, state.history.contains(true), state.history.last == false else { return false }
                state.answered = true
                return true
            }
            if answer { done(true) }
        })
        fireAndForget(lockedRef, "nope")
    }
    lockedRef.removeAllObservers()
    try check(reverted, "a refused fire-and-forget setValue shows, then is taken back")
    let second = try await auth.createUser(withEmail: "quick2-\(suffix)@example.com", password: "secret123")
    try check(second.user.email == "quick2-\(suffix)@example.com", "try await createUser returns its result")
    try auth.signOut()
    say("quickstart: done")
}

/// `#require` for a program: the value, or a failure.
func require<Value>(_ value: Value?, _ what: String = "a value") throws -> Value {
    guard let value else { throw Failure(description: "missing \(what)") }
    return value
}

// A bound for "never": a step that waits forever fails the program instead of hanging its test.
DispatchQueue.global().asyncAfter(deadline: .now() + 120) {
    say("FAIL: no answer within 120 s")
    exit(1)
}
do {
    try await main()
} catch {
    say("FAIL: \(error)")
    exit(1)
}
