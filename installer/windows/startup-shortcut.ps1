# Creates (or replaces) Cairn's shortcut in the user's Startup folder, so Cairn starts at sign-in.
# Generated and run by `cairn autostart enable` on Windows; the placeholders are filled in first.
$ErrorActionPreference = 'Stop'
$shell = New-Object -ComObject WScript.Shell
$link = $shell.CreateShortcut('@SHORTCUT@')
$link.TargetPath = '@TARGET@'
$link.Arguments = '@ARGUMENTS@'
$link.WorkingDirectory = '@WORKDIR@'
$link.IconLocation = '@ICON@'
$link.Description = '@DESCRIPTION@'
# 7: start minimised - the tray icon is the window; the headless daemon has none.
$link.WindowStyle = 7
$link.Save()
