"""The words extraction types and filters names by: titles, head nouns per entity type,
capitalized words that are never names, and game mechanics said with capitals at the table.

Lists, not a model: each is small enough to read, and a wrong word is fixed by editing it.
"""

from __future__ import annotations

import re

from glyphoxa_pipelines.processing.mentions import name_tokens


def words(text: str) -> list[str]:
    """A vocabulary written as one space-separated string (easier to read and diff)."""
    return text.split()


TITLES = frozenset(words(
    "lord lady sir dame king queen prince princess duke duchess baron baroness count countess "
    "emperor empress captain commander general lieutenant sergeant arcanist archmage master "
    "mistress father mother brother sister elder chief chieftain high magister ironkeeper saint "
    "uncle aunt mister mr mrs ms miss dr doctor professor bishop cardinal priest priestess "
    "headmaster warden marshal sheriff mayor regent overlord"
))
NPC_NOUNS = frozenset(words(
    "wizard mage sorcerer sorceress cleric paladin priest priestess king queen prince princess "
    "lord lady duke duchess baron knight captain guard guardsman merchant innkeeper bartender "
    "barkeep barmaid blacksmith smith man woman boy girl dwarf elf gnome halfling human orc half- "
    "elf half-orc dragonborn tiefling goliath warrior ranger rogue bard druid monk fighter "
    "barbarian warlock thief assassin soldier general noble nobleman noblewoman councilman "
    "councilwoman arcanist sage scholar hunter farmer child son daughter father mother brother "
    "sister uncle aunt cousin friend servant apprentice master leader chief chieftain elder witch "
    "necromancer gunslinger sorceror shopkeeper vendor trader alchemist healer scout spy "
    "mercenary captain's sailor pirate hermit oracle prophet seer herald steward butler maid "
    "emissary ambassador envoy advisor counselor guildmaster ironkeeper foreman miner worker "
    "dwarves elves gentleman lass lad fellow stranger traveler wanderer adventurer champion hero "
    "villain tyrant usurper regent mayor governor magistrate judge jailer warden"
))
CREATURE_NOUNS = frozenset(words(
    "dragon bear wolf beast creature monster demon devil fiend horse cat dog hound spider troll "
    "ogre giant beholder owl hawk raven wyvern golem zombie skeleton vampire lich elemental worm "
    "serpent snake basilisk griffon hydra kraken boar panther tiger lion rat ooze umber hulk mind "
    "flayer ghoul ghost wraith specter spectre familiar pet mount steed"
))
LOCATION_NOUNS = frozenset(words(
    "city town village hamlet kingdom empire realm land lands forest wood woods mountain "
    "mountains river lake sea ocean island isle keep castle fortress fort tower temple shrine "
    "cave caves cavern caverns mine mines tavern inn pub bar shop market district quarter road "
    "street gate gates bridge valley desert swamp marsh plains hills peak peaks citadel capital "
    "palace hall manor estate dungeon tomb crypt ruins camp port harbor harbour bay coast canyon "
    "pass quarry foundry forge square plaza library academy school prison jail arena pits pit "
    "sanctum chapel cathedral abbey monastery outpost garrison barracks stronghold spire vault "
    "grove glade highlands lowlands wastes plane continent country province region territory "
    "nation depths tunnels well springs falls cliffs ridge brewery distillery "
    "hold stronghold warcamp fortress"
))
FACTION_NOUNS = frozenset(words(
    "council guild order clan house tribe church cult army legion brotherhood sisterhood company "
    "alliance court family circle syndicate crew gang band league conclave cabal coven consortium "
    "assembly senate watch guard guards knights rangers"
))
ITEM_NOUNS = frozenset(words(
    "sword blade axe bow dagger staff wand ring amulet necklace cloak armor armour shield helm "
    "helmet crown orb tome book scroll gem key map potion hammer spear gun pistol rifle relic "
    "artifact earring earrings gauntlets gauntlet boots belt bracers circlet diadem chalice "
    "goblet lantern mirror idol statue talisman charm locket coin flute lute harp horn"
))
EVENT_NOUNS = frozenset(words("battle war festival celebration siege ceremony massacre"))
LOCATION_PREFIXES = frozenset(words("mount lake castle fort port isle river cape city"))
FACTION_PREFIXES = frozenset(words("house clan order church cult tribe"))
NOUN_TYPES: list[tuple[frozenset[str], str]] = [
    (LOCATION_NOUNS, "location"),
    (FACTION_NOUNS, "faction"),
    (CREATURE_NOUNS, "creature"),
    (ITEM_NOUNS, "item"),
    (EVENT_NOUNS, "event"),
    (NPC_NOUNS, "npc"),
]

# Capitalized words that are not names (sentence furniture, table talk, game mechanics).
NOT_NAMES = frozenset(words(
    "i i'm i'll i've i'd ok okay oh ah uh um hey yes yeah no nope yep so and but or if then the a "
    "an this that these those it it's he she they we you my your his her our their what who why "
    "where when how which well now right sure alright all any some monday tuesday wednesday "
    "thursday friday saturday sunday january february march april may june july august september "
    "october november december god gods dm gm npc npcs pc pcs d&d dungeons dragons dungeon nat "
    "natural ac hp dc xp str dex con int wis cha strength dexterity constitution intelligence "
    "wisdom charisma perception stealth insight investigation persuasion deception intimidation "
    "athletics acrobatics arcana history religion sleight survival medicine performance "
    "initiative advantage disadvantage edition pathfinder twitch youtube discord thanks thank "
    "please sorry hello hi bye goodbye mr mrs ms dr st mister sir lady lord ma'am madam miss guys "
    "everyone everybody english common dwarvish elvish draconic infernal celestial sylvan "
    "undercommon orcish gnomish abyssal primordial jesus christ geez gosh damn hell patreon "
    "geek sundry youtube twitter reddit twitch chatroom"
))
# Spells, class features and table jargon: capitalized at the table, never in-world entities.
MECHANICS = frozenset(
    " ".join(name_tokens(phrase))
    for phrase in re.split(
        ";",
        "hunter's mark;scorching ray;entangle;prestidigitation;magic missile;cure wounds;"
        "healing word;fireball;eldritch blast;sneak attack;thunderwave;shield;mage hand;"
        "minor illusion;vicious mockery;bless;sacred flame;guidance;thaumaturgy;lightning bolt;"
        "fog cloud;sleep;charm person;dispel magic;counterspell;misty step;hex;hold person;"
        "detect magic;identify;feather fall;bardic inspiration;rage;reckless attack;"
        "action surge;second wind;divine smite;lay on hands;wild shape;cunning action;"
        "uncanny dodge;speak with animals;polymorph;haste;invisibility;darkvision;"
        "spiritual weapon;guiding bolt;inflict wounds;shatter;web;moonbeam;faerie fire;"
        "thorn whip;produce flame;shillelagh;druidcraft;fire bolt;ray of frost;shocking grasp;"
        "burning hands;chromatic orb;witch bolt;dissonant whispers;tasha's hideous laughter;"
        "heroism;sanctuary;command;spare the dying;light;mending;message;true strike;"
        "booming blade;green-flame blade;hail of thorns;ensnaring strike;cordon of arrows;"
        "colossus slayer;favored enemy;natural explorer;primeval awareness;channel divinity;"
        "turn undead;critical role;geek and sundry;dungeons and dragons;dungeon master;"
        "game master;new york;los angeles;player's handbook;monster manual;"
        "dungeon master's guide;stoneskin;blur;daylight;dominate person;dominate monster;"
        "dominate;featherfall;firebolt;grasping vine;telekinesis;evasion;sharpshooter;"
        "great weapon master;anti-life shell;mirror image;spider climb;pass without trace;"
        "find familiar;mage armor;magic weapon;blink;fly;gaseous form;greater invisibility;"
        "dimension door;banishment;wall of stone;wall of fire;cone of cold;hunter's marked;"
        "sneak;mockery;silence;darkness;levitate;enlarge;reduce;knock;augury;aid;"
        "lesser restoration;greater restoration;revivify;raise dead;resurrection;sending;"
        "scrying;teleport;wish;cloudkill;conjure animals;call lightning;thunderous smite"
    )
)
