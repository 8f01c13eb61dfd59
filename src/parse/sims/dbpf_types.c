/* The community's DBPF resource types (s3pe for The Sims 3, s4pe for The Sims 4): tag and
 * extension per type id, and the games whose tools list it. Generated from
 * docs/formats/dbpf-types.md by scripts/gen_dbpf_types.sh: do not edit, regenerate. */
#include "parse/sims/dbpf_types.h"

const struct dbpf_type_row dbpf_type_rows[] = {
    {0x0069453E, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning objective */
    {0x00AE6C67, {"BONE", "BONE"}, {".skcon", ".skcon"}, DBPF_GAME_TS3}, /* bone names + inverse bind poses (GS3: skin controller) */
    {0x00B2D882, {"_IMG", "_IMG"}, {".dds", ".dds"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* DDS texture (TS4: may be DST-shuffled) */
    {0x00B552EA, {"_SPT", "_SPT"}, {".tree", ".tree"}, DBPF_GAME_TS3}, /* older SpeedTree tree data */
    {0x00DE5AC5, {"_RMI", "_RMI"}, {".rmi", ".rmi"}, DBPF_GAME_TS4}, /* unknown; only tag/ext known */
    {0x010077BB, {"_AUD", "_AUD"}, {".mp3", ".mp3"}, DBPF_GAME_TS3}, /* MP3 audio */
    {0x010077C4, {"_AUD", "_AUD"}, {".wav", ".wav"}, DBPF_GAME_TS3}, /* WAV audio */
    {0x010077CA, {"_AUD", "_AUD"}, {".xa", ".xa"}, DBPF_GAME_TS3}, /* XA audio */
    {0x010FAF71, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* age/gender map */
    {0x015A1849, {"GEOM", "GEOM"}, {".simgeom", ".simgeom"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* CAS body mesh, RCOL-wrapped */
    {0x0166038C, {"_KEY", "_KEY"}, {".keyname", ".keyname"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* name map: instance → name (wiki tag NMAP) */
    {0x01661233, {"MODL", "MODL"}, {".model", ".model"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* object model (RCOL): LOD list, bounds */
    {0x0175E5CD, {"SCPT", "SCPT"}, {".oldscript", ".oldscript"}, DBPF_GAME_TS3}, /* old-format script (by name) */
    {0x0181B0D2, {"_AUD", "_AUD"}, {".abk", ".abk"}, DBPF_GAME_TS3}, /* audio bank */
    {0x01942E2C, {"LOTD", "LOTD"}, {".lotd", ".lotd"}, DBPF_GAME_TS4}, /* lot description */
    {0x01A527DB, {"_AUD", "_AUD"}, {".snr", ".snr"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* EA SNR audio: voice */
    {0x01D0E75D, {"MATD", "MATD"}, {".material", ".material"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* material: shader + parameters (RCOL) */
    {0x01D10F34, {"MLOD", "MLOD"}, {".lod", ".lod"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* model LOD: mesh groups + buffers (RCOL) */
    {0x01EEF63A, {"_AUD", "_AUD"}, {".sns", ".sns"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* EA SNS audio: effects, music */
    {0x02019972, {"MTST", "MTST"}, {".mtst", ".mtst"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* material set: materials per state (RCOL) */
    {0x021D7E8C, {"SPT2", "SPT2"}, {".speedtree", ".speedtree"}, DBPF_GAME_TS3}, /* SpeedTree data (RCOL; wiki chunk TREE) */
    {0x022B756C, {"WRDH", "WRDH"}, {".wdescnamehash", ".wdescnamehash"}, DBPF_GAME_TS3}, /* world name hash */
    {0x024A0E52, {"CNFG", "CNFG"}, {".cfg", ".cfg"}, DBPF_GAME_TS3}, /* config text (s3pi: Spore/SimCity) */
    {0x025C90A6, {"_CSS", "_CSS"}, {".css", ".css"}, DBPF_GAME_TS3}, /* CSS style sheet (UI) */
    {0x025C95B6, {"LAYO", "LAYO"}, {".layout", ".layout"}, DBPF_GAME_TS3}, /* UI layout (XML) */
    {0x025ED6F4, {"SIMO", "SIMO"}, {".outfit", ".outfit"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* sim outfit (LL, TS4: sim info) */
    {0x029E333B, {"VOCE", "VOCE"}, {".voicemix", ".voicemix"}, DBPF_GAME_TS3}, /* audio controllers / voice mix */
    {0x02B9F662, {"PROP", "PROP"}, {".audprop", ".audprop"}, DBPF_GAME_TS3}, /* audio properties */
    {0x02C9EFF2, {"MIXR", "MIXR"}, {".audmix", ".audmix"}, DBPF_GAME_TS3}, /* audio submix */
    {0x02D5DF13, {"JAZZ", "JAZZ"}, {".jazz", ".jazz"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* animation state machine (Jazz); XML in TS4 (wiki) */
    {0x02DC343F, {"OBJK", "OBJK"}, {".objkey", ".objkey"}, DBPF_GAME_TS3}, /* object key: components (model, script, footprint …) */
    {0x033260E3, {"TkMk", "TkMk"}, {".trackmask", ".trackmask"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* animation track (bone) mask */
    {0x0333406C, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* XML; TS4: font configuration (wiki, LL) */
    {0x033A1435, {"TXTC", "TXTC"}, {".compositor", ".compositor"}, DBPF_GAME_TS3}, /* texture compositor (pattern recipe) */
    {0x033B2B66, {"KDTR", "KDTR"}, {".kdtree", ".kdtree"}, DBPF_GAME_TS4}, /* terrain KD tree, RCOL */
    {0x0341ACC9, {"TXTF", "TXTF"}, {".fabric", ".fabric"}, DBPF_GAME_TS3}, /* texture fabric (pattern layer) */
    {0x034AEECB, {"CASP", "CASP"}, {".caspart", ".caspart"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* CAS part: one wearable/body item */
    {0x0354796A, {"TONE", "TONE"}, {".skintone", ".skintone"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* skin tone */
    {0x03555BA8, {"TONE", "TONE"}, {".hairtone", ".hairtone"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) hair tone */
    {0x0355E0A6, {"BOND", "BOND"}, {".bonedelta", ".bonedelta"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* bone delta: slider bone offsets (LL: bone pose) */
    {0x0358B08A, {"FACE", "FACE"}, {".faceblend", ".faceblend"}, DBPF_GAME_TS3}, /* face slider blend */
    {0x03B33DDF, {"ITUN", "_XML"}, {".tuning", ".xml"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* instance tuning XML */
    {0x03B4C61D, {"LITE", "LITE"}, {".light", ".light"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* lights (RCOL) */
    {0x03D843C2, {"CCHE", "CCHE"}, {".cacheentry", ".cacheentry"}, DBPF_GAME_TS3}, /* cache entry */
    {0x03D86EA4, {"DETL", "DETL"}, {".details", ".details"}, DBPF_GAME_TS3}, /* world layer: group of lots/layers */
    {0x03E9D964, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning pie_menu_category */
    {0x0418FE2A, {"CFEN", "CFEN"}, {".fence", ".fence"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* fence catalog */
    {0x044AE110, {"COMP", "COMP"}, {".complate", ".complate"}, DBPF_GAME_TS3}, /* complate: style/recolour preset */
    {0x049CA4CD, {"CSTR", "CSTR"}, {".stairs", ".stairs"}, DBPF_GAME_TS3}, /* stairs catalog */
    {0x04A4D951, {"WDET", "WDET"}, {".wrlddetail", ".wrlddetail"}, DBPF_GAME_TS3}, /* world detail: GUID/name pairs */
    {0x04AC5D93, {"CPRX", "CPRX"}, {".proxyprod", ".proxyprod"}, DBPF_GAME_TS3}, /* proxy product catalog */
    {0x04B30669, {"CTTL", "CTTL"}, {".terraintool", ".terraintool"}, DBPF_GAME_TS3}, /* terrain geometry brush catalog */
    {0x04C58103, {"CRAL", "CRAL"}, {".railing", ".railing"}, DBPF_GAME_TS3}, /* railing catalog */
    {0x04D2B465, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning achievement_collection */
    {0x04D82D90, {"CMRU", "CMRU"}, {".cachemru", ".cachemru"}, DBPF_GAME_TS3}, /* most-recently-used cache */
    {0x04ED4BB2, {"CTPT", "CTPT"}, {".terrainpaint", ".terrainpaint"}, DBPF_GAME_TS3}, /* terrain paint brush catalog */
    {0x04F3CC01, {"CFIR", "CFIR"}, {".fireplace", ".fireplace"}, DBPF_GAME_TS3}, /* fireplace catalog */
    {0x04F51033, {"SBNO", "SBNO"}, {".binoutfit", ".binoutfit"}, DBPF_GAME_TS3}, /* sim outfit, binary form */
    {0x04F88964, {"SIME", "SIME"}, {".simexport", ".simexport"}, DBPF_GAME_TS3}, /* exported sim description */
    {0x051DF2DD, {"CBLN", "CBLN"}, {".compblend", ".compblend"}, DBPF_GAME_TS3}, /* CAS blend data (by name) */
    {0x0580A2B4, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) object thumb S */
    {0x0580A2B5, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) object thumb M */
    {0x0580A2B6, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) object thumb L */
    {0x0580A2CD, {"SNAP", "SNAP"}, {".png", ".png"}, DBPF_GAME_TS3}, /* snapshot PNG */
    {0x0580A2CE, {"SNAP", "SNAP"}, {".png", ".png"}, DBPF_GAME_TS3}, /* snapshot PNG */
    {0x0580A2CF, {"SNAP", "SNAP"}, {".png", ".png"}, DBPF_GAME_TS3}, /* snapshot PNG */
    {0x0589DC44, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) wall/floor pattern thumb S */
    {0x0589DC45, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) wall/floor pattern thumb M */
    {0x0589DC46, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) wall/floor pattern thumb L */
    {0x0589DC47, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) wall/floor pattern thumb, 4th (use unclear) */
    {0x0591B1AF, {"UPST", "UPST"}, {".usercastpreset", ".usercastpreset"}, DBPF_GAME_TS3}, /* user CAS preset */
    {0x05B17698, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) fireplace thumb S */
    {0x05B17699, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) fireplace thumb M */
    {0x05B1769A, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) fireplace thumb L */
    {0x05B1B524, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) terrain paint thumb S */
    {0x05B1B525, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) terrain paint thumb M */
    {0x05B1B526, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) terrain paint thumb L */
    {0x05ED1226, {"REFS", "REFS"}, {".references", ".references"}, DBPF_GAME_TS3}, /* TGI reference table (world/lot) */
    {0x05FF6BA4, {"2ARY", "2ARY"}, {".bnry", ".bnry"}, DBPF_GAME_TS3}, /* 2-D array (lot grids) */
    {0x0604ABDA, {"DMTR", "DMTR"}, {".dreamtree", ".dreamtree"}, DBPF_GAME_TS3}, /* dream (wish) tree, XML */
    {0x060B390C, {"CWAT", "CWAT"}, {".water", ".water"}, DBPF_GAME_TS3}, /* terrain water brush catalog */
    {0x062853A8, {"FAMD", "FAMD"}, {".household", ".household"}, DBPF_GAME_TS3}, /* household data */
    {0x062C8204, {"BBLN", "BBLN"}, {".bodyblend", ".bodyblend"}, DBPF_GAME_TS3}, /* body slider blend */
    {0x062E9EE0, {"_TTF", "_TTF"}, {".ttf", ".ttf"}, DBPF_GAME_TS3}, /* TrueType font */
    {0x06302271, {"CINF", "CINF"}, {".color", ".color"}, DBPF_GAME_TS3}, /* colour info */
    {0x063261DA, {"HINF", "HINF"}, {".haircolor", ".haircolor"}, DBPF_GAME_TS3}, /* hair colour info */
    {0x063261F0, {"CASC", "CASC"}, {".cascolorinfo", ".cascolorinfo"}, DBPF_GAME_TS3}, /* CAS colour info (GS3 only) */
    {0x06326213, {"OBCI", "OBCI"}, {".objcolor", ".objcolor"}, DBPF_GAME_TS3}, /* object colour info */
    {0x065DF841, {"CPCA", "CPCA"}, {".cpcache", ".cpcache"}, DBPF_GAME_TS3}, /* cache (by name) */
    {0x0668F628, {"WDDT", "WDDT"}, {".wdescdetail", ".wdescdetail"}, DBPF_GAME_TS3}, /* world description text key */
    {0x0668F630, {"WDNL", "WDNL"}, {".numlots", ".numlots"}, DBPF_GAME_TS3}, /* world lot count */
    {0x0668F635, {"TWNI", "TWNI"}, {".png", ".png"}, DBPF_GAME_TS3}, /* world (town) image */
    {0x0668F639, {"TWNP", "TWNP"}, {".imgpath", ".imgpath"}, DBPF_GAME_TS3}, /* world image source path */
    {0x067CAA11, {"BGEO", "BGEO"}, {".blendgeom", ".blendgeom"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* blend geometry: slider morph deltas */
    {0x06B981ED, {"OBJS", "OBJS"}, {".objs", ".objs"}, DBPF_GAME_TS3}, /* serialized object/script state */
    {0x06CE4804, {"META", "META"}, {".worldmeta", ".worldmeta"}, DBPF_GAME_TS3}, /* world metadata */
    {0x073FAA07, {"S3SA", "S3SA"}, {".s3sa", ".s3sa"}, DBPF_GAME_TS3}, /* script assembly: signed .NET DLL */
    {0x074DFB83, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning relbit */
    {0x07936CE0, {"SPLT", "SPLT"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* build block catalog (h:ctproductblock) */
    {0x0904DF10, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning relationshipbit */
    {0x0A227BCF, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* world off-lot mesh */
    {0x0A36F07A, {"CCFP", "CCFP"}, {".fountain", ".fountain"}, DBPF_GAME_TS3}, /* fountain/pool catalog */
    {0x0A98EAF0, {"JSON", "JSON"}, {".json", ".json"}, DBPF_GAME_TS3}, /* JSON (s3pi: SimCity UI) */
    {0x0C07456D, {"COLL", "COLL"}, {".bnry", ".bnry"}, DBPF_GAME_TS3}, /* unknown */
    {0x0C07469F, {"CLDR", "CLDR"}, {".bnry", ".bnry"}, DBPF_GAME_TS3}, /* unknown */
    {0x0C37A5B5, {"LOOK", "LOOK"}, {".lookuptab", ".lookuptab"}, DBPF_GAME_TS3}, /* lookup table */
    {0x0C772E27, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning action */
    {0x0CA4C78B, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning sim_template */
    {0x0D338A3A, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS4}, /* lot preview thumb */
    {0x0E4D15FB, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning role_state */
    {0x0EEB823A, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client Renderer_FadeTuning ※ */
    {0x105205BA, {"SPRE", "SPRE"}, {".simpreset", ".simpreset"}, DBPF_GAME_TS4}, /* sim preset (LL); h:siminfo */
    {0x11C258C0, {"CTRG", "CTRG"}, {".bnry", ".bnry"}, DBPF_GAME_TS3}, /* unknown */
    {0x11E72A63, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning notebook_entry */
    {0x122FC66A, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* lot type event map, XML (h:lotx) */
    {0x12496650, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning camera */
    {0x12952634, {"LDNB", "LDNB"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* world lot architecture (LL) */
    {0x153D2219, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* world water manifest */
    {0x16CA6BC4, {"_THM", "_THM"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* thumb extra (LL) */
    {0x16CCF748, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS4}, /* sim portrait thumb (DBPF.js) */
    {0x17C0C281, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* world data, unknown */
    {0x18F3C673, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* world lights info */
    {0x19301120, {"WCLR", "WCLR"}, {".worldcolortimeline", ".worldcolortimeline"}, DBPF_GAME_TS4}, /* world colour timeline */
    {0x1A3201CD, {"_MOD", "_MOD"}, {".override", ".override"}, DBPF_GAME_TS3}, /* override (by name) */
    {0x1A8506C5, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* modal music mapping, XML (h:mmusx) */
    {0x1B25A024, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* sound properties, XML (h:sysx) */
    {0x1C12D458, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning tagcategoriesmetadata */
    {0x1C1CF1F7, {"CRAL", "CRAL"}, {".railing", ".railing"}, DBPF_GAME_TS4}, /* railing catalog */
    {0x1C99B344, {"ANCH", "ANCH"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* animation boundary-condition cache (LL) */
    {0x1CC04273, {"WMAP", "WMAP"}, {".worldmap", ".worldmap"}, DBPF_GAME_TS4}, /* world map, RCOL */
    {0x1D6DF1CF, {"CCOL", "CCOL"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* column catalog (h:ctproductcolumn) */
    {0x1F886EAD, {"_INI", "_INI"}, {".ini", ".ini"}, DBPF_GAME_TS3}, /* INI configuration */
    {0x20D81496, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* WMRF reference */
    {0x220557DA, {"STBL", "STBL"}, {".stbl", ".stbl"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* string table: localised text */
    {0x2451C101, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning achievement_category */
    {0x2553F435, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning drama_node */
    {0x25796DCA, {"_OTF", "_OTF"}, {".otf", ".otf"}, DBPF_GAME_TS4}, /* OpenType font */
    {0x2653E3C8, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) fence thumb S */
    {0x2653E3C9, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) fence thumb M */
    {0x2653E3CA, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) fence thumb L */
    {0x2673076D, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning client_tutorial */
    {0x26978421, {"_CUR", "_CUR"}, {".cur", ".cur"}, DBPF_GAME_TS4}, /* cursor */
    {0x276CA4B9, {"_TTF", "_TTF"}, {".ttf", ".ttf"}, DBPF_GAME_TS4}, /* TrueType font */
    {0x28B64675, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning aspiration */
    {0x2A8A5E22, {"TRAY", "TRAY"}, {".trayitem", ".trayitem"}, DBPF_GAME_TS4}, /* tray item metadata (h:traymetadataresource) */
    {0x2AD195F2, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* terrain height map (LL) */
    {0x2BC04EDF, {"LRLE", "LRLE"}, {".lrle", ".lrle"}, DBPF_GAME_TS4}, /* LRLE image, CAS (h:casrle) */
    {0x2C01BC15, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client Renderer_GlobalHighlightSettings ※ */
    {0x2C70ADF8, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning career_level */
    {0x2D4284F0, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) railing thumb S */
    {0x2D4284F1, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) railing thumb M */
    {0x2D4284F2, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) railing thumb L */
    {0x2E47A104, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning social_group */
    {0x2E75C764, {"ICON", "ICON"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) catalog icon S */
    {0x2E75C765, {"ICON", "ICON"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) catalog icon M */
    {0x2E75C766, {"ICON", "ICON"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) catalog icon L */
    {0x2E75C767, {"ICON", "ICON"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) catalog icon, 4th size (h:thumb) */
    {0x2F59B437, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning club_seed */
    {0x2F7D0002, {"IMAG", "IMAG"}, {".jpg", ".jpg"}, DBPF_GAME_TS3}, /* JPEG image */
    {0x2F7D0004, {"IMAG", "IMAG"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* PNG image (LL: PNG converted from DDS) */
    {0x2F7D0006, {"IMAG", "IMAG"}, {".tga", ".tga"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* TGA image; LL: TS4 PNG-from-DDS */
    {0x2F7D0008, {"UITX", "UITX"}, {".uitexture", ".uitexture"}, DBPF_GAME_TS3}, /* UI texture */
    {0x2FAE983E, {"CFND", "CFND"}, {".foundation", ".foundation"}, DBPF_GAME_TS4}, /* foundation catalog (h:ctproductfoundation) */
    {0x31397645, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client RegionSort ※ */
    {0x316C78F2, {"CFND", "CFND"}, {".foundation", ".foundation"}, DBPF_GAME_TS3}, /* foundation catalog */
    {0x319E4F1D, {"OBJD", "COBJ"}, {".object", ".cobj"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* TS3 object definition; TS4 catalog object */
    {0x339BC5BD, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning statistic */
    {0x3453CF95, {"RLE2", "RLE2"}, {".rle2", ".rle2"}, DBPF_GAME_TS4}, /* RLE2 image: run-length DXT5 (CAS) */
    {0x35A33E29, {"WDSH", "WDSH"}, {".wdeschash", ".wdeschash"}, DBPF_GAME_TS3}, /* world description hash */
    {0x370EFD6E, {"ROOM", "ROOM"}, {".room", ".room"}, DBPF_GAME_TS4}, /* room (by name) */
    {0x376840D7, {"_AVI", "_AVI"}, {".avi", ".avi"}, DBPF_GAME_TS4}, /* video (h:vp6); wiki: data starts SCH1 */
    {0x37B999F1, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client Renderer_GlobalShadowSettings ※ */
    {0x37EF2EE7, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning royalty */
    {0x3924DE26, {"_BPT", "_BPT"}, {".blueprint", ".blueprint"}, DBPF_GAME_TS4}, /* blueprint */
    {0x3A65AF29, {"MINF", "MINF"}, {".makeup", ".makeup"}, DBPF_GAME_TS3}, /* makeup info */
    {0x3BD45407, {"_HHI", "_HHI"}, {".hhi", ".hhi"}, DBPF_GAME_TS4}, /* household thumb (h:simhouseholdthumbnail) */
    {0x3BF8FD86, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* world lot parameter info */
    {0x3C1AF1F2, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS4}, /* CAS part thumb (h:simcaspartthumbnail) */
    {0x3C1D8799, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning zone_modifier */
    {0x3C2A8647, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS4}, /* buy/build thumb */
    {0x3D8632D0, {"TNBM", "TNBM"}, {".terrainblendmap", ".terrainblendmap"}, DBPF_GAME_TS4}, /* terrain blend (paint) map (h:blendmap) */
    {0x3F0C529A, {"CSPN", "CSPN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* spandrel (LL); h:ceilingrail */
    {0x3F163505, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning slot_type_set */
    {0x3F8662EA, {"JPEG", "JPEG"}, {".jpg", ".jpg"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) JPEG image */
    {0x3FD6243E, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning walk_by */
    {0x4115F9D5, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* sound mix settings, XML (h:mixbus) */
    {0x457FC032, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client Renderer_CensorTuning ※ */
    {0x48C28979, {"CLCT", "CLCT"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* spawner (LL); h:ctproductlocator */
    {0x48C2D5ED, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning template_chooser */
    {0x48C75CE3, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning career_track */
    {0x49395302, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning tag_set */
    {0x4D1A5589, {"OBJN", "OBJN"}, {".objn", ".objn"}, DBPF_GAME_TS3}, /* placed objects of a lot or world layer */
    {0x4D5B0931, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS4}, /* thumb */
    {0x4DB8251E, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client Renderer_GlobalDofSettings ※ */
    {0x4E97BAD8, {"OBSC", "OBSC"}, {".objscript", ".objscript"}, DBPF_GAME_TS3}, /* object script (by name) */
    {0x4F726BBE, {"FTPT", "FTPT"}, {".ftpt", ".ftpt"}, DBPF_GAME_TS4}, /* world landing strip (LL; h:worldlandingstrip) */
    {0x4F739CEE, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning test_based_score */
    {0x51077643, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning scommodity (static commodity) */
    {0x515CA4CD, {"CWAL", "CWAL"}, {".wall", ".wall"}, DBPF_GAME_TS3}, /* wall/floor pattern catalog */
    {0x51E7A18D, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning region */
    {0x545AC67A, {"DATA", "DATA"}, {".data", ".data"}, DBPF_GAME_TS4}, /* SimData: binary data beside tuning (h:simdata) */
    {0x54BD4618, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client Automation ※ */
    {0x56278554, {"_SGI", "_SGI"}, {".sgi", ".sgi"}, DBPF_GAME_TS4}, /* unknown; only tag/ext known */
    {0x598F28E7, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning situation_goal */
    {0x5B02819E, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning object_state */
    {0x5B282D45, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS4}, /* body part thumb */
    {0x5BE29703, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* world visual effects info */
    {0x5DE9DBA0, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) stairs thumb S */
    {0x5DE9DBA1, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) stairs thumb M */
    {0x5DE9DBA2, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) stairs thumb L */
    {0x6017E896, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning buff */
    {0x6224C9D6, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning strategy */
    {0x626F60CC, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) CAS part thumb S ‡ */
    {0x626F60CD, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) CAS part thumb M ‡ */
    {0x626F60CE, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) CAS part thumb L ‡ */
    {0x62E94D38, {"_XML", "_XML"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* combined binary tuning (h:combined_tuning) */
    {0x62ECC59A, {"_GFX", "_GFX"}, {".gfx", ".gfx"}, DBPF_GAME_TS4}, /* Scaleform GFx UI movie */
    {0x63A33EA7, {"ANIM", "ANIM"}, {".animimg", ".animimg"}, DBPF_GAME_TS3}, /* animated texture (RCOL) */
    {0x669499DC, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* XML: UI or credits ‡ */
    {0x67771F5C, {"JSON", "JSON"}, {".json", ".json"}, DBPF_GAME_TS3}, /* JSON (s3pi: SimCity UI) */
    {0x69A5DAA4, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning slot_type */
    {0x6B20C4F3, {"CLIP", "CLIP"}, {".animation", ".animation"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* animation clip */
    {0x6B6D837D, {"SNAP", "SNAP"}, {".png", ".png"}, DBPF_GAME_TS3}, /* snapshot PNG */
    {0x6B6D837E, {"SNAP", "SNAP"}, {".png", ".png"}, DBPF_GAME_TS3}, /* snapshot PNG */
    {0x6B6D837F, {"SNAP", "SNAP"}, {".png", ".png"}, DBPF_GAME_TS3}, /* snapshot PNG */
    {0x6DFF1A66, {"UNKN", "UNKN"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* MTX catalog */
    {0x6E0DDA9F, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning sim_filter */
    {0x6F40796A, {"WRPR", "WRPR"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* world road polygons */
    {0x6FA49828, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning reward */
    {0x7147A350, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning object_part */
    {0x71A449C9, {"SKYB", "SKYB"}, {".skyboxtexture", ".skyboxtexture"}, DBPF_GAME_TS4}, /* sky box texture data */
    {0x71BDB8A2, {"STLK", "STLK"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* styled look (LL); h:featuredoutfit */
    {0x72683C15, {"STPR", "STPR"}, {".sktonepreset", ".sktonepreset"}, DBPF_GAME_TS3}, /* skin tone preset */
    {0x729F6C4F, {"HHOL", "HHOL"}, {".householddescription", ".householddescription"}, DBPF_GAME_TS4}, /* household description (LL); h:housedescription */
    {0x736884F1, {"VPXY", "VPXY"}, {".proxy", ".proxy"}, DBPF_GAME_TS3}, /* visual proxy: links model parts, LODs (RCOL) */
    {0x738E6C56, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning topic */
    {0x73996BEB, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning career */
    {0x73E93EEB, {"_XML", "_XML"}, {".manifest", ".manifest"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) XML manifest */
    {0x74050B1F, {"STRM", "STRM"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* magazine collection (LL, GS4) */
    {0x76BCF80C, {"TRIM", "TRIM"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* trim catalog */
    {0x78559E9E, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning achievement */
    {0x78C8BCE4, {"WRMF", "WRMF"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* world manifest */
    {0x7DF2169C, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning snippet */
    {0x800A3690, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning caslighting */
    {0x8070223D, {"AUDT", "AUDT"}, {".audtun", ".audtun"}, DBPF_GAME_TS3}, /* audio tuning */
    {0x810A102D, {"DWRL", "DWRL"}, {".dworld", ".dworld"}, DBPF_GAME_TS4}, /* world data */
    {0x81CA1A10, {"MTBL", "MTBL"}, {".mtbl", ".mtbl"}, DBPF_GAME_TS4}, /* LL: cutout info table */
    {0x82B43584, {"_CRC", "_CRC"}, {".checksum", ".checksum"}, DBPF_GAME_TS3}, /* checksum */
    {0x84C23219, {"CFLT", "CFLT"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* floor trim catalog */
    {0x86136AA5, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client Renderer_GlobalLightSettings ※ */
    {0x892C4B8A, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* world camera info */
    {0x893E429C, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning tagstraitgroupmetadata */
    {0x8B18FF6E, {"HOTC", "HOTC"}, {".hotspotctrl", ".hotspotctrl"}, DBPF_GAME_TS4}, /* CAS hotspot control */
    {0x8E71065D, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS4}, /* pet breed/coat thumb */
    {0x8EAF13DE, {"_RIG", "_RIG"}, {".grannyrig", ".grannyrig"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* skeleton: Granny2 (wrapped or raw) or EA clear bone list */
    {0x8FB3E0B1, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning tutorial_tip */
    {0x8FFB80F6, {"_ADS", "_ADS"}, {".dds", ".dds"}, DBPF_GAME_TS3}, /* DDS texture (second type) */
    {0x9063660D, {"WTXT", "WTXT"}, {".wrldtxtrmap", ".wrldtxtrmap"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* TS3 terrain texture map; TS4 terrain data (LL) */
    {0x9151E6BC, {"CWST", "CWST"}, {".wallstyle", ".wallstyle"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* TS3 wall style; TS4 half wall (LL) */
    {0x91568FD8, {"LOBJ", "LOBJ"}, {".txt", ".txt"}, DBPF_GAME_TS4}, /* lot object list */
    {0x91EDBD3E, {"CRST", "CRST"}, {".roofstyle", ".roofstyle"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* roof style catalog (LL: roof) */
    {0x94C5D14A, {"SIGR", "SIGR"}, {".signature", ".signature"}, DBPF_GAME_TS3}, /* signature */
    {0x9917EACD, {"RNDP", "RNDP"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* modular piece (h:modularpiece) */
    {0x99CBC754, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client NativeBuildBuy ※ */
    {0x99D98089, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* UI event mapping, XML (h:imusx) */
    {0x9A20CD1C, {"CSTR", "CSTR"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* stairs catalog (h:ctproductstair) */
    {0x9C07855F, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning situation_job */
    {0x9C925813, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS4}, /* sim preset thumb */
    {0x9CC21262, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning service_npc */
    {0x9D1AB874, {"SCPT", "SCPT"}, {".sculpt", ".sculpt"}, DBPF_GAME_TS4}, /* CAS sculpt */
    {0x9DB989FD, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning tagsmetadata */
    {0x9DDB5FDA, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning simlighting */
    {0x9DF2F1F2, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning situation_goal_set */
    {0x9F5CFF10, {"CSTL", "CSTL"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* style catalog (h:ctproductstyle) */
    {0xA0451CBD, {"CPMP", "CPMP"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* modular piece catalog (h:ctproductmodularpiece) */
    {0xA057811C, {"CFRZ", "CFRZ"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* frieze catalog */
    {0xA1FF2FC4, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS4}, /* world-map lot thumb */
    {0xA576C2E7, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* sound modifier mapping, XML (h:mapx) */
    {0xA5DFFCF3, {"CPLT", "CPLT"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* pool trim catalog (h:ctproductpooltrim) */
    {0xA680EA4B, {"WRLD", "WRLD"}, {".world", ".world"}, DBPF_GAME_TS4}, /* world description */
    {0xA8D58BE5, {"SKIL", "SKIL"}, {".xml", ".xml"}, DBPF_GAME_TS3}, /* skills store, XML */
    {0xA8F7B517, {"CWNS", "CWNS"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* window set catalog (h:ctproductwindowset) */
    {0xAC03A936, {"CMTX", "CMTX"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* generic MTX (LL); h:ctproductmtxbundle */
    {0xAC16FBEC, {"RMAP", "RMAP"}, {".regionmap", ".regionmap"}, DBPF_GAME_TS4}, /* CAS region map: GEOM refs per region */
    {0xAD366F95, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) thumb (use unclear) */
    {0xAD366F96, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) thumb (use unclear) */
    {0xAD6FDF1F, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning posture */
    {0xAE39399F, {"TMSH", "TMSH"}, {".terrainmesh", ".terrainmesh"}, DBPF_GAME_TS4}, /* terrain mesh */
    {0xAFADAC48, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning away_action */
    {0xB0118C15, {"TMLT", "TMLT"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* thumb extra 2 (LL) */
    {0xB0311D0F, {"CRTR", "CRTR"}, {".rooftrim", ".rooftrim"}, DBPF_GAME_TS4}, /* roof trim catalog */
    {0xB1CC1AF6, {"_VID", "_VID"}, {".video", ".video"}, DBPF_GAME_TS3}, /* video */
    {0xB3C438F0, {"HHBN", "HHBN"}, {".householdbinary", ".householdbinary"}, DBPF_GAME_TS4}, /* household binary (LL: household template) */
    {0xB4DD716B, {"_INV", "_INV"}, {".inventory", ".inventory"}, DBPF_GAME_TS3}, /* inventory */
    {0xB4F762C9, {"CFLR", "CFLR"}, {".cflr", ".cflr"}, DBPF_GAME_TS4}, /* floor pattern catalog (h:ctproductfloorpattern) */
    {0xB52F5055, {"FBLN", "FBLN"}, {".blendunit", ".blendunit"}, DBPF_GAME_TS3}, /* CAS slider: blend unit (GS3 tag BLND) */
    {0xB61DE6B4, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning object */
    {0xB67673A2, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS4}, /* pet face preset thumb */
    {0xB6C8B6A0, {"_IMG", "_IMG"}, {".dds", ".dds"}, DBPF_GAME_TS4}, /* DDS/DST image (wiki: overlays?) */
    {0xB734E44F, {"FTPT", "FTPT"}, {".ftpt", ".ftpt"}, DBPF_GAME_TS4}, /* footprint variant (LL: footprint 3) */
    {0xB7FF8F95, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning subroot */
    {0xB8444447, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* unknown */
    {0xB8BF1A63, {"_XML", "_XML"}, {".zonemod", ".zonemod"}, DBPF_GAME_TS4}, /* tuning user_interface_info */
    {0xB91E18DB, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* magalog data (LL, GS4) */
    {0xB93A9915, {"TMCT", "TMCT"}, {".thumbcache", ".thumbcache"}, DBPF_GAME_TS4}, /* thumb cache table */
    {0xB9881120, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning ensemble */
    {0xBA7B60B8, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning mood */
    {0xBA856C78, {"RLES", "RLES"}, {".rles", ".rles"}, DBPF_GAME_TS4}, /* RLES image: RLE DXT5 with specular */
    {0xBC4A5044, {"CLHD", "CLHD"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* clip header */
    {0xBC80ED59, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* world data, unknown */
    {0xBDD82221, {"AUEV", "AUEV"}, {".auev", ".auev"}, DBPF_GAME_TS4}, /* UI event map ‡ */
    {0xBE04173A, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning spaction (story progression) */
    {0xC020FCAD, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning aspiration_track */
    {0xC0DB5AE7, {"OBJD", "OBJD"}, {".object", ".object"}, DBPF_GAME_TS4}, /* object definition: model/rig/footprint refs (h:objectdefinition) */
    {0xC1ED6D35, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS4}, /* sim portrait thumb (h:simportraitthumbnail) */
    {0xC202C770, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* music data, XML (h:trax) */
    {0xC2CAA646, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client Telemetry_Tuning ※ */
    {0xC4DFAE6D, {"COAT", "COAT"}, {".animalcoat", ".animalcoat"}, DBPF_GAME_TS4}, /* pet coat pattern */
    {0xC582D2FB, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* voice effect plugin, XML (h:voicex) */
    {0xC5F6763E, {"SMOD", "SMOD"}, {".simmodifier", ".simmodifier"}, DBPF_GAME_TS4}, /* sim modifier (CAS slider) */
    {0xC71CA490, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* unknown */
    {0xCB5FDDC7, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning trait */
    {0xCD9DE247, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS4}, /* featured-outfit thumb (h:simfeaturedoutfitthumbnail) */
    {0xCF9A4ACE, {"MDLR", "MDLR"}, {".modular", ".modular"}, DBPF_GAME_TS3}, /* modular object definition */
    {0xD063545B, {"LDES", "LDES"}, {".lotdesc", ".lotdesc"}, DBPF_GAME_TS3}, /* lot description: position, size, type */
    {0xD2DC5BAD, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* ambience, XML (h:ambx) */
    {0xD3044521, {"RSLT", "RSLT"}, {".slot", ".slot"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* slot definitions (RCOL) */
    {0xD33C281E, {"_BPI", "_BPI"}, {".bpi", ".bpi"}, DBPF_GAME_TS4}, /* blueprint image (LL); h:lotthumbnail */
    {0xD382BF57, {"FTPT", "FTPT"}, {".footprint", ".footprint"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* footprint (RCOL) */
    {0xD4D9FBE5, {"PTRN", "PTRN"}, {".patternlist", ".patternlist"}, DBPF_GAME_TS3}, /* pattern list, XML */
    {0xD55F7CAF, {"LRIG", "LRIG"}, {".lightrig", ".lightrig"}, DBPF_GAME_TS3}, /* light rig */
    {0xD5F0F921, {"CWAL", "CWAL"}, {".wall", ".wall"}, DBPF_GAME_TS4}, /* wall pattern catalog (h:ctproductwallpattern) */
    {0xD65DAFF9, {"REGD", "REGD"}, {".regiondescription", ".regiondescription"}, DBPF_GAME_TS4}, /* region description */
    {0xD70DD79E, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client HsvTweakerSettings ※ */
    {0xD83892B7, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client Thumbnail ※ */
    {0xD84E7FC5, {"ICON", "ICON"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) icon (TS3 lot thumbs) */
    {0xD84E7FC6, {"ICON", "ICON"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) icon (TS3 lot thumbs) */
    {0xD84E7FC7, {"ICON", "ICON"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) icon */
    {0xD8800D66, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning lot_tuning */
    {0xD99F5E5C, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* unknown */
    {0xD9BD0909, {"WDNM", "WDNM"}, {".wdescname", ".wdescname"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) world name text key */
    {0xDB43E069, {"DMAP", "DMAP"}, {".deformermap", ".deformermap"}, DBPF_GAME_TS4}, /* deformer map (CAS morph) */
    {0xDD057DCC, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning tagtuning */
    {0xDD3223A7, {"BUFF", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) buff store, XML */
    {0xDD6233D6, {"HTML", "HTML"}, {".html", ".html"}, DBPF_GAME_TS3}, /* HTML (s3pi: SimCity UI) */
    {0xDE6AD3CF, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client Video_GlobalTuning ※ */
    {0xDEA2951C, {"PETB", "PETB"}, {".breed", ".breed"}, DBPF_GAME_TS3}, /* pet breed */
    {0xDEBAFB73, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning broadcaster */
    {0xE04A24A3, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning tutorial */
    {0xE06AE65E, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client Renderer_GlobalVolLightScatteringSettings ※ */
    {0xE0D75679, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client BuildBuy ※ */
    {0xE0ED7129, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* world pipeline data */
    {0xE1477E18, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning game_ruleset */
    {0xE18CAEE2, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS4}, /* sim thumb (h:simthumbnail) */
    {0xE2249422, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* animation constraint cache */
    {0xE231B3D8, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* object modifiers, XML (h:objmod) */
    {0xE24B5287, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning castuning */
    {0xE254AE6E, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS4}, /* sim portrait thumb (DBPF.js) */
    {0xE350DBD8, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning aspiration_category */
    {0xE5105066, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) XML, unknown */
    {0xE5105067, {"RMLS", "RMLS"}, {".xml", ".xml"}, DBPF_GAME_TS3}, /* recipe master list, XML */
    {0xE5105068, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) XML, unknown */
    {0xE55EEACB, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client Video_Playlist ※ */
    {0xE6BBD7DE, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning venue */
    {0xE7ADA79D, {"CFTR", "CFTR"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* fountain trim catalog (h:ctproductfountaintrim) */
    {0xE882D22F, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning interaction */
    {0xEA5118B0, {"_SWB", "_SWB"}, {".effects", ".bnry"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* visual effects (Swarm) */
    {0xEAA32ADD, {"CPRE", "CPRE"}, {".caspreset", ".caspreset"}, DBPF_GAME_TS4}, /* CAS preset */
    {0xEB97F823, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning recipe */
    {0xEBCBB16C, {"CTPT", "CTPT"}, {".trpt", ".trpt"}, DBPF_GAME_TS4}, /* terrain paint catalog (h:ctproductterrainpaint) */
    {0xEC3DA10E, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning bucks_perk */
    {0xEC6A8FC6, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning balloon */
    {0xEE17C6AD, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning animation */
    {0xF0633989, {"UNKN", "UNKN"}, {".bnry", ".bnry"}, DBPF_GAME_TS4}, /* world file header */
    {0xF0FF5598, {"TRIG", "TRIG"}, {".triggers", ".triggers"}, DBPF_GAME_TS3}, /* shortcut definitions (s3pi notes) */
    {0xF1EDBD86, {"CRMT", "CRPT"}, {".roofmatrl", ".roofmatrl"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* roof pattern catalog */
    {0xF3A38370, {"NGMP", "NGMP"}, {".guidmap", ".guidmap"}, DBPF_GAME_TS3}, /* name hash → instance map */
    {0xF3ABFF3C, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning casmodifiertuning */
    {0xF401205D, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning headline */
    {0xF609FD60, {"WPID", "WPID"}, {".wpackid", ".wpackid"}, DBPF_GAME_TS3}, /* world package id */
    {0xF93B40CF, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* client Renderer_GlobalSsaoSettings ※ */
    {0xF958A092, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning zone_director */
    {0xFA0FFA34, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning club_interaction_group */
    {0xFBC3AEEB, {"_XML", "_XML"}, {".xml", ".xml"}, DBPF_GAME_TS4}, /* tuning situation */
    {0xFCB1A1E4, {"WOBD", "WOBD"}, {".worldobjdata", ".worldobjdata"}, DBPF_GAME_TS4}, /* world object data */
    {0xFCEAB65B, {"THUM", "THUM"}, {".png", ".png"}, DBPF_GAME_TS3 | DBPF_GAME_TS4}, /* (both*) thumb (colour swatch, DBPF.js) */
    {0xFD04E3BE, {"PRPX", "PRPX"}, {".propx", ".propx"}, DBPF_GAME_TS4}, /* audio configuration (LL; h:brobx) */
};

const size_t dbpf_ntype_rows = sizeof dbpf_type_rows / sizeof dbpf_type_rows[0];
