import Foundation
import HearthClient

// Every call of Firebase's own API-surface tests (FirebaseDatabase's DatabaseAPITests, FirebaseCore's
// CoreAPITests), restated, plus the forms apps write: this file compiling is the test that code
// written against FirebaseCore + FirebaseDatabase builds against HearthClient unchanged. Nothing here
// runs (the functions are never called).


final class DBCompileTest {
  func usage() {
    var url = "url"; let path = "path"; let host = "host"; let port = 0; let yes = true
    var database = Database.database()
    database = Database.database(url: url)
    if let app = FirebaseApp.app() {
      database = Database.database(app: app, url: url)
      database = Database.database(app: app)
    }
    let _: FirebaseApp? = database.app
    var ref: DatabaseReference = database.reference()
    ref = database.reference(withPath: path)
    ref = database.reference(fromURL: url)
    database.purgeOutstandingWrites(); database.goOffline(); database.goOnline()
    database.useEmulator(withHost: host, port: port)
    let _: Bool = database.isPersistenceEnabled
    let _: UInt = database.persistenceCacheSizeBytes
    let _: DispatchQueue = database.callbackQueue
    Database.setLoggingEnabled(yes)
    let _: String = Database.sdkVersion()

    let uint: UInt = 0
    let type: DataEventType = .value
    let child = "child"; let childKey: String? = "key"; let value: Any? = "value"; let priority: Any? = "p"
    var handle: DatabaseHandle = uint
    var q = DatabaseQuery()
    handle = q.observe(type) { s in let _: DataSnapshot = s }
    handle = q.observe(type) { s, k in let _: DataSnapshot = s; let _: String? = k }
    handle = q.observe(type) { s in let _: DataSnapshot = s } withCancel: { e in let _: Error = e }
    handle = q.observe(type) { s, k in let _: DataSnapshot = s; let _: String? = k } withCancel: { e in let _: Error = e }
    q.getData { e, s in let _: Error? = e; let _: DataSnapshot? = s }
    Task { do { let _: DataSnapshot = try await DatabaseQuery().getData() } catch {} }
    q.observeSingleEvent(of: type) { s in let _: DataSnapshot = s }
    q.observeSingleEvent(of: type) { s, k in let _: DataSnapshot = s; let _: String? = k }
    Task { let _: (DataSnapshot, String?) = await DatabaseQuery().observeSingleEventAndPreviousSiblingKey(of: type) }
    q.observeSingleEvent(of: type) { s in let _: DataSnapshot = s } withCancel: { e in let _: Error = e }
    q.observeSingleEvent(of: type) { s, k in let _: DataSnapshot = s; let _: String? = k } withCancel: { e in let _: Error = e }
    q.removeObserver(withHandle: handle); q.removeAllObservers(); q.keepSynced(yes)
    q = q.queryLimited(toFirst: handle); q = q.queryLimited(toLast: handle)
    q = q.queryOrdered(byChild: child); q = q.queryOrderedByKey(); q = q.queryOrderedByValue(); q = q.queryOrderedByPriority()
    q = q.queryStarting(atValue: value); q = q.queryStarting(atValue: value, childKey: childKey)
    q = q.queryStarting(afterValue: value); q = q.queryStarting(afterValue: value, childKey: childKey)
    q = q.queryEnding(atValue: value); q = q.queryEnding(beforeValue: value); q = q.queryEnding(beforeValue: value, childKey: childKey)
    q = q.queryEqual(toValue: value); q = q.queryEqual(toValue: value, childKey: childKey)
    ref = q.ref

    let priorityAny: Any = "p"
    let values = [AnyHashable: Any]()
    var tr = TransactionResult()
    ref = ref.child(child); ref = ref.childByAutoId()
    ref.setValue(value)
    ref.setValue(value) { e, r in let _: Error? = e; let _: DatabaseReference = r }
    Task { do { let _: DatabaseReference = try await DatabaseReference().setValue("value") } catch {} }
    ref.setValue(value, andPriority: priority)
    ref.setValue(value, andPriority: priority) { e, r in let _: Error? = e; let _: DatabaseReference = r }
    Task { do { let _: DatabaseReference = try await DatabaseReference().setValue("value", andPriority: "p") } catch {} }
    ref.removeValue()
    ref.removeValue { e, r in let _: Error? = e; let _: DatabaseReference = r }
    Task { do { let _: DatabaseReference = try await DatabaseReference().removeValue() } catch {} }
    ref.setPriority(priority)
    ref.setPriority(priority) { e, r in let _: Error? = e; let _: DatabaseReference = r }
    Task { do { let _: DatabaseReference = try await DatabaseReference().setPriority("p") } catch {} }
    ref.updateChildValues(values)
    ref.updateChildValues(values) { e, r in let _: Error? = e; let _: DatabaseReference = r }
    Task { do { let _: DatabaseReference = try await DatabaseReference().updateChildValues([:]) } catch {} }
    handle = ref.observe(type) { s in let _: DataSnapshot = s }
    handle = ref.observe(type) { s, k in let _: DataSnapshot = s; let _: String? = k }
    handle = ref.observe(type) { s in let _: DataSnapshot = s } withCancel: { e in let _: Error = e }
    handle = ref.observe(type) { s, k in let _: DataSnapshot = s; let _: String? = k } withCancel: { e in let _: Error = e }
    ref.observeSingleEvent(of: type) { s in let _: DataSnapshot = s }
    ref.observeSingleEvent(of: type) { s, k in let _: DataSnapshot = s; let _: String? = k }
    Task { let _: (DataSnapshot, String?) = await DatabaseReference().observeSingleEventAndPreviousSiblingKey(of: type) }
    ref.observeSingleEvent(of: type) { s in let _: DataSnapshot = s } withCancel: { e in let _: Error = e }
    ref.observeSingleEvent(of: type) { s, k in let _: DataSnapshot = s; let _: String? = k } withCancel: { e in let _: Error = e }
    ref.getData { e, s in let _: Error? = e; let _: DataSnapshot? = s }
    Task { do { let _: DataSnapshot = try await DatabaseReference().getData() } catch {} }
    ref.removeObserver(withHandle: handle); ref.removeAllObservers(); ref.keepSynced(yes)
    q = ref.queryLimited(toFirst: handle); q = ref.queryLimited(toLast: handle); q = ref.queryOrdered(byChild: child)
    q = ref.queryOrderedByKey(); q = ref.queryOrderedByPriority()
    q = ref.queryStarting(atValue: value); q = ref.queryStarting(atValue: value, childKey: childKey)
    q = ref.queryStarting(afterValue: value); q = ref.queryStarting(afterValue: value, childKey: childKey)
    q = ref.queryEnding(atValue: value); q = ref.queryEnding(atValue: value, childKey: childKey)
    q = ref.queryEqual(toValue: value); q = ref.queryEqual(toValue: value, childKey: childKey)
    ref.onDisconnectSetValue(value)
    ref.onDisconnectSetValue(value) { e, r in let _: Error? = e; let _: DatabaseReference = r }
    Task { do { let _: DatabaseReference = try await DatabaseReference().onDisconnectSetValue("value") } catch {} }
    ref.onDisconnectSetValue(value, andPriority: priorityAny)
    ref.onDisconnectSetValue(value, andPriority: priority) { e, r in let _: Error? = e; let _: DatabaseReference = r }
    Task { do { let _: DatabaseReference = try await DatabaseReference().onDisconnectSetValue("value", andPriority: "p") } catch {} }
    ref.onDisconnectRemoveValue()
    ref.onDisconnectRemoveValue { e, r in let _: Error? = e; let _: DatabaseReference = r }
    Task { do { let _: DatabaseReference = try await DatabaseReference().onDisconnectRemoveValue() } catch {} }
    ref.onDisconnectUpdateChildValues(values)
    ref.onDisconnectUpdateChildValues(values) { e, r in let _: Error? = e; let _: DatabaseReference = r }
    Task { do { let _: DatabaseReference = try await DatabaseReference().onDisconnectUpdateChildValues([:]) } catch {} }
    ref.cancelDisconnectOperations()
    ref.cancelDisconnectOperations { e, r in let _: Error? = e; let _: DatabaseReference = r }
    Task { do { let _: DatabaseReference = try await DatabaseReference().cancelDisconnectOperations() } catch {} }
    ref.runTransactionBlock { md in let _: MutableData = md; return tr }
    ref.runTransactionBlock { md in let _: MutableData = md; return tr } andCompletionBlock: { e, b, s in let _: Error? = e; let _: Bool = b; let _: DataSnapshot? = s }
    Task { do { let _: (Bool, DataSnapshot) = try await DatabaseReference().runTransactionBlock { md in let _: MutableData = md; return TransactionResult() } } catch {} }
    ref.runTransactionBlock({ md in let _: MutableData = md; return tr }, andCompletionBlock: { e, b, s in let _: Error? = e; let _: Bool = b; let _: DataSnapshot? = s }, withLocalEvents: yes)
    let _: String = ref.description()
    DatabaseReference.goOffline(); DatabaseReference.goOnline()
    let _: DatabaseReference? = ref.parent
    let _: String? = ref.key
    ref = ref.root
    url = ref.url
    database = ref.database

    let opt = DataEventType(rawValue: 0)
    switch opt { case .childAdded: break; case .childRemoved: break; case .childChanged: break; case .childMoved: break; case .value: break; case .none, .some: break }

    var snap = DataSnapshot()
    snap = snap.childSnapshot(forPath: path)
    let _: Bool = snap.hasChild(child); let _: Bool = snap.hasChildren(); let _: Bool = snap.exists()
    let _: Any? = snap.valueInExportFormat()
    ref = snap.ref
    let _: Any? = snap.value; let _: UInt = snap.childrenCount; let _: String? = snap.key
    let _: NSEnumerator = snap.children; let _: Any? = snap.priority

    var md = MutableData()
    let _: Bool = md.hasChildren(); let _: Bool = md.hasChild(atPath: path)
    md = md.childData(byAppendingPath: path)
    let _: Any? = md.value; let _: Any? = md.priority; let _: UInt = md.childrenCount
    let _: NSEnumerator = md.children; let _: String? = md.key
    let n: NSNumber = 0
    let _: [AnyHashable: Any] = ServerValue.timestamp()
    let _: [AnyHashable: Any] = ServerValue.increment(n)
    tr = TransactionResult.success(withValue: md)
    tr = TransactionResult.abort()
    _ = tr
  }

  // Typical app-code patterns (must compile without errors / ideally without warnings)
  struct Msg: Codable { var text: String; @ServerTimestamp var ts: Date? }
  func patterns(ref: DatabaseReference) async throws {
    ref.observe(.value) { snap in
      for case let c as DataSnapshot in snap.children { _ = c.key }
      let arr = snap.children.allObjects as? [DataSnapshot]
      _ = arr
      _ = try? snap.data(as: Msg.self)
      if let dict = snap.value as? [String: Any] { _ = dict }
    }
    try await ref.setValue(["a": 1])
    try ref.setValue(from: Msg(text: "x"))
    try ref.setValue(from: Msg(text: "x"), encoder: Database.Encoder()) { err in _ = err }
    let s = try await ref.getData()
    _ = try s.data(as: Msg.self, decoder: Database.Decoder())
    try await ref.child("x").setValue(ServerValue.timestamp())
    try await ref.updateChildValues(["a/b": ServerValue.increment(1)])
    let (committed, snap2) = try await ref.runTransactionBlock { cur in
      cur.value = ((cur.value as? Int) ?? 0) + 1
      return TransactionResult.success(withValue: cur)
    }
    _ = (committed, snap2)
    let m = Msg(text: "t")
    _ = m
  }
}

final class CoreCompileTest {
  func usage() {
    FirebaseApp.configure()
    if let options = FirebaseOptions(contentsOfFile: "p") {
      FirebaseApp.configure(name: "App", options: options)
      FirebaseApp.configure(options: options)
    }
    if let _ = FirebaseApp.app() {}
    if let _ = FirebaseApp.app(name: "App") {}
    if let _ = FirebaseApp.allApps {}
    if let app = FirebaseApp.app() {
      app.delete { _ in }
      Task { await app.delete() }
      _ = app.name; _ = app.options; _ = app.isDataCollectionDefaultEnabled
      app.isDataCollectionDefaultEnabled = false
    }
    _ = FirebaseConfiguration.shared
    FirebaseConfiguration.shared.setLoggerLevel(.debug)
    let l: FirebaseLoggerLevel = .debug
    switch l { case .error: break; case .warning: break; case .notice: break; case .info: break; case .debug: break }
    _ = FirebaseLoggerLevel.min; _ = FirebaseLoggerLevel.max
    if let _ = FirebaseOptions.defaultOptions() {}
    _ = FirebaseOptions(googleAppID: "a", gcmSenderID: "b")
    if let o = FirebaseOptions.defaultOptions() {
      _ = o.bundleID; _ = o.gcmSenderID; _ = o.googleAppID
      if let _ = o.apiKey {}; if let _ = o.clientID {}; if let _ = o.projectID {}
      if let _ = o.databaseURL {}; if let _ = o.storageBucket {}; if let _ = o.appGroupID {}
    }
    _ = FirebaseVersion()
  }
}

func labelled(ref: DatabaseReference) {
  var h: UInt? = ref.observe(.value, with: { s in _ = s })
  h = ref.observe(.childAdded, andPreviousSiblingKeyWith: { s, p in _ = (s, p) })
  h = ref.observe(.value, with: { _ in }, withCancel: { e in print(e.localizedDescription) })
  h = ref.observe(.value, with: { _ in }, withCancel: nil)
  _ = h
  ref.observeSingleEvent(of: .value, with: { _ in })
  ref.observeSingleEvent(of: .value, with: { _ in }, withCancel: { _ in })
  ref.setValue(1, withCompletionBlock: { err, r in _ = (err, r) })
  ref.removeValue(completionBlock: { _, _ in })
  ref.getData(completion: { _, _ in })
  ref.runTransactionBlock({ d in TransactionResult.success(withValue: d) })
  ref.runTransactionBlock({ d in .abort() }, andCompletionBlock: nil, withLocalEvents: false)
  ref.cancelDisconnectOperations(completionBlock: nil)
  Database.database().reference().child("x").observe(.value) { _ in }
  let e: DataEventType = .childMoved
  switch e { case .childAdded, .childRemoved, .childChanged, .childMoved, .value: break }
  print(e.rawValue)
}
func inAsync(ref: DatabaseReference) async throws {
  ref.observeSingleEvent(of: .value) { _ in }
  ref.observe(.value) { _ in }
  try await ref.cancelDisconnectOperations()
  let (s, k) = await ref.observeSingleEventAndPreviousSiblingKey(of: .childAdded)
  _ = (s, k)
  try await ref.removeValue()
}

// FirebaseAuth's email/password API, as apps (and FirebaseAuth's SwiftAPI.swift) spell it.
final class AuthCompileTest {
  func main() {
    let auth = Auth.auth()
    let _: Auth = Auth.auth(app: FirebaseApp.app()!)
    let _: FirebaseApp? = auth.app
    let _: User? = auth.currentUser
    auth.languageCode = "en"
    auth.useAppLanguage()
    auth.useEmulator(withHost: "localhost", port: 9099)
    auth.signIn(withEmail: "e", password: "p") { result, error in _ = (result?.user.uid, error) }
    auth.signIn(withEmail: "e", password: "p")
    auth.createUser(withEmail: "e", password: "p") { authResult, error in
      guard let user = authResult?.user, error == nil else { return }
      _ = user.email
    }
    auth.signInAnonymously { result, _ in _ = result?.additionalUserInfo?.isNewUser }
    auth.signIn(withCustomToken: "t") { _, _ in }
    auth.signIn(with: EmailAuthProvider.credential(withEmail: "e", password: "p")) { _, _ in }
    auth.sendPasswordReset(withEmail: "e") { error in _ = error }
    auth.sendPasswordReset(withEmail: "e", actionCodeSettings: ActionCodeSettings()) { _ in }
    auth.confirmPasswordReset(withCode: "c", newPassword: "p") { _ in }
    auth.verifyPasswordResetCode("c") { email, _ in _ = email }
    auth.applyActionCode("c") { _ in }
    do { try auth.signOut() } catch let signOutError as NSError { print(signOutError) }
    let handle: NSObjectProtocol = auth.addStateDidChangeListener { auth, user in _ = (auth, user?.uid) }
    auth.removeStateDidChangeListener(handle)
    let tokenHandle = auth.addIDTokenDidChangeListener { _, _ in }
    auth.removeIDTokenDidChangeListener(tokenHandle)
    if let user = auth.currentUser {
      let _: String = user.uid
      let _: String? = user.email
      let _: Bool = user.isEmailVerified
      let _: Bool = user.isAnonymous
      let _: String? = user.displayName
      let _: URL? = user.photoURL
      let _: String? = user.refreshToken
      let _: String = user.providerID
      let _: [UserInfo] = user.providerData
      let _: Date? = user.metadata.creationDate
      user.getIDToken { token, _ in _ = token }
      user.getIDTokenForcingRefresh(true) { _, _ in }
      user.getIDTokenResult { result, _ in _ = result?.claims }
      user.reload { _ in }
      user.sendEmailVerification { _ in }
      user.sendEmailVerification(beforeUpdatingEmail: "n") { _ in }
      user.updatePassword(to: "p") { _ in }
      user.updateEmail(to: "e") { _ in }
      user.delete { _ in }
      user.reauthenticate(with: EmailAuthProvider.credential(withEmail: "e", password: "p")) { _, _ in }
      user.link(with: EmailAuthProvider.credential(withEmail: "e", password: "p")) { _, _ in }
      let changeRequest = user.createProfileChangeRequest()
      changeRequest.displayName = "n"
      changeRequest.photoURL = URL(string: "https://example.com/p.png")
      changeRequest.commitChanges { _ in }
    }
  }

  func errors(_ error: Error) {
    let nsError = error as NSError
    if nsError.domain == AuthErrors.domain, let code = AuthErrorCode(rawValue: nsError.code) {
      switch code {
      case .emailAlreadyInUse, .wrongPassword, .invalidCredential, .userNotFound, .weakPassword, .invalidEmail,
        .tooManyRequests, .userDisabled, .requiresRecentLogin, .networkError:
        print(code.code, nsError.userInfo[AuthErrors.userInfoNameKey] ?? "")
      default: break
      }
    }
  }

  func asyncForms() async throws {
    let auth = Auth.auth()
    let result: AuthDataResult = try await auth.signIn(withEmail: "e", password: "p")
    try await auth.createUser(withEmail: "e", password: "p")
    try await auth.signInAnonymously()
    try await auth.signIn(withCustomToken: "t")
    try await auth.sendPasswordReset(withEmail: "e")
    try await auth.confirmPasswordReset(withCode: "c", newPassword: "p")
    let _: String = try await auth.verifyPasswordResetCode("c")
    try await auth.applyActionCode("c")
    let user = result.user
    let _: String = try await user.getIDToken()
    let _: String = try await user.getIDToken(forcingRefresh: true)
    let _: AuthTokenResult = try await user.getIDTokenResult()
    try await user.reload()
    try await user.sendEmailVerification()
    try await user.sendEmailVerification(beforeUpdatingEmail: "n")
    try await user.updatePassword(to: "p")
    try await user.updateEmail(to: "e")
    try await user.createProfileChangeRequest().commitChanges()
    try await user.reauthenticate(with: EmailAuthProvider.credential(withEmail: "e", password: "p"))
    try await user.delete()
    // Hearth's addition
    for await user in auth.authStateChanges { _ = user?.uid }
  }
}

// FirebaseAuth's identity-provider credentials, as FirebaseAuth 12's SwiftAPI.swift spells them.
final class ProviderCompileTest {
  func credentials(auth: Auth, user: User, idToken: String, accessToken: String, nonce: String) async throws {
    let google: AuthCredential = GoogleAuthProvider.credential(withIDToken: idToken, accessToken: accessToken)
    let _: String = GoogleAuthProvider.id
    let _: AuthCredential = FacebookAuthProvider.credential(withAccessToken: accessToken)
    let _: AuthCredential = GitHubAuthProvider.credential(withToken: accessToken)
    let _: AuthCredential = TwitterAuthProvider.credential(withToken: accessToken, secret: "s")
    let _: OAuthCredential = OAuthProvider.credential(providerID: .apple, idToken: idToken)
    let _: OAuthCredential = OAuthProvider.credential(providerID: AuthProviderID.custom("oidc.x"), idToken: idToken, accessToken: accessToken)
    let _: OAuthCredential = OAuthProvider.credential(providerID: .gitHub, accessToken: accessToken)
    let _: OAuthCredential = OAuthProvider.credential(providerID: .apple, idToken: idToken, rawNonce: nonce)
    let apple: OAuthCredential = OAuthProvider.appleCredential(withIDToken: idToken, rawNonce: nonce, fullName: PersonNameComponents())
    let _: (String?, String?, String?) = (apple.idToken, apple.accessToken, apple.secret)
    let _: OAuthProvider = OAuthProvider(providerID: "oidc.x", auth: auth)
    let _: OAuthProvider = OAuthProvider.provider(providerID: AuthProviderID.google, auth: auth)
    let _: String = AuthProviderID.google.rawValue
    let result: AuthDataResult = try await auth.signIn(with: google)
    let _: OAuthCredential? = result.credential
    let _: [String: Any]? = result.additionalUserInfo?.profile
    let _: String? = result.additionalUserInfo?.username
    try await user.link(with: apple)
    try await user.reauthenticate(with: google)
    try await user.unlink(fromProvider: GoogleAuthProvider.id)
    auth.signIn(with: google) { result, error in _ = (result?.credential, error) }
    user.link(with: apple) { _, _ in }
  }
}
