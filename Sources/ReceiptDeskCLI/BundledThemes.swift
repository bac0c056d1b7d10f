// Written by scripts/embed-themes from Themes/*.toml; edit those files and run it again.

/// The themes of Themes/, by name, as the binary carries them.
enum BundledThemes {
    static let texts: [String: String] = [
        "default": #"""
# ReceiptDesk default theme: for dark terminals. The background stays the terminal's own ("default").
# Roles are helix-style dotted scopes; a role not given falls back to its parent ("ui.text.muted" -> "ui.text").

"ui.text" = { fg = "fg" }
"ui.text.muted" = { fg = "muted" }
"ui.accent" = { fg = "cyan", modifiers = ["bold"] }
"ui.selection" = { bg = "selection", modifiers = ["bold"] }
"ui.border" = { fg = "border" }
"ui.title" = { fg = "cyan", modifiers = ["bold"] }
"ui.header" = { fg = "fg", bg = "panel", modifiers = ["bold"] }
"ui.footer" = { fg = "muted", bg = "panel" }
"ui.footer.key" = { fg = "cyan", bg = "panel", modifiers = ["bold"] }
"ui.badge" = { fg = "panel", bg = "blue", modifiers = ["bold"] }
"ui.badge.demo" = { fg = "black", bg = "yellow", modifiers = ["bold"] }
"ui.prompt" = { fg = "fg" }
"ui.prompt.cursor" = { modifiers = ["reversed"] }
"ui.mark" = { fg = "yellow", modifiers = ["bold"] }

"status.ok" = { fg = "green" }
"status.warn" = { fg = "yellow" }
"status.danger" = { fg = "red", modifiers = ["bold"] }

"entitlement.active" = { fg = "green", modifiers = ["bold"] }
"entitlement.owned" = { fg = "green", modifiers = ["bold"] }
"entitlement.grace" = { fg = "yellow", modifiers = ["bold"] }
"entitlement.retry" = { fg = "orange" }
"entitlement.expired" = { fg = "muted" }
"entitlement.revoked" = { fg = "red", modifiers = ["bold"] }
"entitlement.none" = { fg = "muted" }

"coverage.paid" = { fg = "green" }
"coverage.trial" = { fg = "cyan" }
"coverage.grace" = { fg = "yellow" }
"coverage.retry" = { fg = "orange" }
"coverage.gap" = { fg = "border" }
"coverage.refund" = { fg = "red", modifiers = ["bold"] }

"event" = { fg = "fg" }
"event.purchase" = { fg = "green" }
"event.subscribed" = { fg = "green" }
"event.resubscribed" = { fg = "green" }
"event.trialStarted" = { fg = "cyan" }
"event.trialConverted" = { fg = "green" }
"event.renewed" = { fg = "fg" }
"event.upgraded" = { fg = "blue" }
"event.downgraded" = { fg = "blue" }
"event.crossgraded" = { fg = "blue" }
"event.autoRenewDisabled" = { fg = "yellow" }
"event.autoRenewEnabled" = { fg = "green" }
"event.billingIssue" = { fg = "orange" }
"event.gracePeriodStarted" = { fg = "yellow" }
"event.billingRecovered" = { fg = "green" }
"event.expired" = { fg = "muted" }
"event.lapsed" = { fg = "muted" }
"event.refunded" = { fg = "red", modifiers = ["bold"] }
"event.refundDeclined" = { fg = "fg" }
"event.refundReversed" = { fg = "green", modifiers = ["bold"] }
"event.familyRevoked" = { fg = "red" }
"event.consumptionRequested" = { fg = "magenta" }
"event.priceIncrease" = { fg = "magenta" }

[palette]
fg = "#d0d0d0"
muted = "#8a8a8a"
border = "#4e4e4e"
panel = "#262626"
selection = "#3a3a5a"
cyan = "#5fd7d7"
blue = "#5f87d7"
green = "#87d75f"
yellow = "#ffd75f"
orange = "#ff8700"
red = "#ff5f5f"
magenta = "#d787d7"
black = "#000000"
"""#,
        "high-contrast": #"""
# High contrast: pure colours, bold everywhere it carries meaning, no dim text.
inherits = "default"

"ui.text.muted" = { fg = "white" }
"ui.selection" = { fg = "black", bg = "yellow", modifiers = ["bold"] }
"ui.header" = { fg = "black", bg = "white", modifiers = ["bold"] }
"ui.footer" = { fg = "black", bg = "white" }
"ui.footer.key" = { fg = "blue", bg = "white", modifiers = ["bold", "underlined"] }
"status.warn" = { fg = "yellow", modifiers = ["bold"] }
"status.danger" = { fg = "red", modifiers = ["bold", "underlined"] }
"entitlement.expired" = { fg = "white", modifiers = ["underlined"] }

[palette]
fg = "white"
muted = "white"
border = "white"
panel = "black"
selection = "blue"
cyan = "light-cyan"
blue = "light-blue"
green = "light-green"
yellow = "light-yellow"
orange = "light-yellow"
red = "light-red"
magenta = "light-magenta"
black = "black"
white = "light-white"
"""#,
        "light": #"""
# ReceiptDesk light theme: dark text on a light terminal.
inherits = "default"

"ui.selection" = { bg = "selection" }
"ui.header" = { fg = "fg", bg = "panel", modifiers = ["bold"] }
"ui.badge" = { fg = "white", bg = "blue", modifiers = ["bold"] }

[palette]
fg = "#1c1c1c"
muted = "#6c6c6c"
border = "#bcbcbc"
panel = "#e4e4e4"
selection = "#d7d7ff"
cyan = "#005f87"
blue = "#0050a0"
green = "#007000"
yellow = "#8a6a00"
orange = "#af5f00"
red = "#c00000"
magenta = "#870087"
white = "#ffffff"
"""#,
        "mono": #"""
# Mono: no colour at all, meaning carried by attributes (what NO_COLOR terminals get anyway).

"ui.text" = {}
"ui.text.muted" = { modifiers = ["dim"] }
"ui.accent" = { modifiers = ["bold"] }
"ui.selection" = { modifiers = ["reversed"] }
"ui.border" = { modifiers = ["dim"] }
"ui.title" = { modifiers = ["bold"] }
"ui.header" = { modifiers = ["bold", "underlined"] }
"ui.footer" = { modifiers = ["dim"] }
"ui.footer.key" = { modifiers = ["bold"] }
"ui.badge" = { modifiers = ["reversed"] }
"ui.prompt.cursor" = { modifiers = ["reversed"] }
"ui.mark" = { modifiers = ["bold"] }
"status.ok" = {}
"status.warn" = { modifiers = ["underlined"] }
"status.danger" = { modifiers = ["bold", "underlined"] }
"entitlement.active" = { modifiers = ["bold"] }
"entitlement.owned" = { modifiers = ["bold"] }
"entitlement.grace" = { modifiers = ["bold", "underlined"] }
"entitlement.retry" = { modifiers = ["underlined"] }
"entitlement.expired" = { modifiers = ["dim"] }
"entitlement.revoked" = { modifiers = ["bold", "underlined"] }
"coverage.paid" = { modifiers = ["bold"] }
"coverage.gap" = { modifiers = ["dim"] }
"coverage.refund" = { modifiers = ["bold", "underlined"] }
"event.refunded" = { modifiers = ["bold", "underlined"] }
"event.autoRenewDisabled" = { modifiers = ["underlined"] }
"""#,
        "nord": #"""
# Nord: arctic blues (Arctic Ice Studio's palette).
inherits = "default"

[palette]
fg = "#d8dee9"
muted = "#7b88a1"
border = "#4c566a"
panel = "#3b4252"
selection = "#434c5e"
cyan = "#88c0d0"
blue = "#81a1c1"
green = "#a3be8c"
yellow = "#ebcb8b"
orange = "#d08770"
red = "#bf616a"
magenta = "#b48ead"
black = "#2e3440"
"""#,
        "solarized-dark": #"""
# Solarized (dark), with Ethan Schoonover's palette.
inherits = "default"

"ui.header" = { fg = "base1", bg = "base02", modifiers = ["bold"] }
"ui.footer" = { fg = "base01", bg = "base02" }
"ui.footer.key" = { fg = "cyan", bg = "base02", modifiers = ["bold"] }
"ui.selection" = { bg = "base02", modifiers = ["bold"] }

[palette]
fg = "#839496"
muted = "#586e75"
border = "#586e75"
panel = "#073642"
selection = "#073642"
base02 = "#073642"
base01 = "#586e75"
base1 = "#93a1a1"
cyan = "#2aa198"
blue = "#268bd2"
green = "#859900"
yellow = "#b58900"
orange = "#cb4b16"
red = "#dc322f"
magenta = "#d33682"
"""#,
    ]
}
