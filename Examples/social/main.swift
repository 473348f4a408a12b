import SeedApps

SeedMain.run(SocialApp(), summary: "profiles, a username login and followers (Hearth's seed tutorial 002)")
