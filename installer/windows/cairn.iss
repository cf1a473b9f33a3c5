; Inno Setup script: installs the one-folder bundle (dist\cairn from ./scripts/build on Windows)
; for the current user, with a Start-menu entry and, if chosen, a shortcut in the Startup folder
; (the same shortcut `cairn autostart enable` makes). Uninstalling removes the program and the
; shortcuts, never the user's data in %LOCALAPPDATA%\cairn (docs/install.md says how to).
;   iscc installer\windows\cairn.iss
; Not built here: Inno Setup runs on Windows.

#define AppVersion "0.1.0"

[Setup]
AppId={{6C3A4E0B-8F0E-4D52-9C51-CA1B2D3E4F50}
AppName=Cairn
AppVersion={#AppVersion}
AppPublisher=Cairn
DefaultDirName={localappdata}\Programs\Cairn
DefaultGroupName=Cairn
PrivilegesRequired=lowest
OutputDir=..\..\dist
OutputBaseFilename=cairn-{#AppVersion}-setup
Compression=lzma2
SolidCompression=yes
WizardStyle=modern
UninstallDisplayIcon={app}\cairnw.exe
ArchitecturesInstallIn64BitMode=x64compatible

[Languages]
Name: "en"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "autostart"; Description: "Start Cairn in the system tray when I sign in"

[Files]
Source: "..\..\dist\cairn\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\Cairn"; Filename: "{app}\cairnw.exe"; WorkingDir: "{app}"
Name: "{userstartup}\Cairn"; Filename: "{app}\cairnw.exe"; WorkingDir: "{app}"; Tasks: autostart

[Run]
Filename: "{app}\cairnw.exe"; Description: "Start Cairn now"; Flags: nowait postinstall skipifsilent
