<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>ArchiveWindow</name>
    <message numerus="yes">
        <source>{} (%n memories)</source>
        <translation>
            <numerusform>{} (%n memory)</numerusform>
            <numerusform>{} (%n memories)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n memories</source>
        <translation>
            <numerusform>%n memory</numerusform>
            <numerusform>%n memories</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n revisions</source>
        <translation>
            <numerusform>%n revision</numerusform>
            <numerusform>%n revisions</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Warning: the folder of project {0} ({1}) holds a control character in its name. Another Cairn does not take such a folder, so the %n memories of this project are not imported there. Move the project to a clean folder (`cairn workspace move {1} NEW-FOLDER`) and export again.</source>
        <translation>
            <numerusform>Warning: the folder of project {0} ({1}) holds a control character in its name. Another Cairn does not take such a folder, so the %n memory of this project is not imported there. Move the project to a clean folder (`cairn workspace move {1} NEW-FOLDER`) and export again.</numerusform>
            <numerusform>Warning: the folder of project {0} ({1}) holds a control character in its name. Another Cairn does not take such a folder, so the %n memories of this project are not imported there. Move the project to a clean folder (`cairn workspace move {1} NEW-FOLDER`) and export again.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Preview of {} (nothing was changed): it would add %n memories.</source>
        <translation>
            <numerusform>Preview of {} (nothing was changed): it would add %n memory.</numerusform>
            <numerusform>Preview of {} (nothing was changed): it would add %n memories.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Imported {}: added %n memories.</source>
        <translation>
            <numerusform>Imported {}: added %n memory.</numerusform>
            <numerusform>Imported {}: added %n memories.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>DetailPanel</name>
    <message numerus="yes">
        <source>Recalled %n time(s), last {}</source>
        <translation>
            <numerusform>Recalled %n time, last {}</numerusform>
            <numerusform>Recalled %n times, last {}</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>HealthWindow</name>
    <message numerus="yes">
        <source>%n warning(s):</source>
        <translation>
            <numerusform>%n warning:</numerusform>
            <numerusform>%n warnings:</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n file(s) kept by restores: {} (remove them when no longer needed)</source>
        <translation>
            <numerusform>%n file kept by restores: {} (remove it when no longer needed)</numerusform>
            <numerusform>%n files kept by restores: {} (remove them when no longer needed)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>{} second(s)</source>
        <translation>
            <numerusform>{} second</numerusform>
            <numerusform>{} seconds</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>{} byte(s)</source>
        <translation>
            <numerusform>{} byte</numerusform>
            <numerusform>{} bytes</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>MemoriesWindow</name>
    <message numerus="yes">
        <source>The best %n results; more may match: refine the search</source>
        <translation>
            <numerusform>The best result; more may match: refine the search</numerusform>
            <numerusform>The best %n results; more may match: refine the search</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n results</source>
        <translation>
            <numerusform>%n result</numerusform>
            <numerusform>%n results</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n memories shown; scroll down for more</source>
        <translation>
            <numerusform>%n memory shown; scroll down for more</numerusform>
            <numerusform>%n memories shown; scroll down for more</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n memories</source>
        <translation>
            <numerusform>%n memory</numerusform>
            <numerusform>%n memories</numerusform>
        </translation>
    </message>
</context>
</TS>
