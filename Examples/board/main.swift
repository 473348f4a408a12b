import SeedApps

SeedMain.run(BoardApp(), summary: "a message board and your own posts, working offline too (Hearth's seed tutorials 003 and 004)")
