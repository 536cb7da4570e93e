"""Embedded vocabularies for pronounceable demo domain names, one per language.

Each language has nouns grouped by theme (the theme also picks a fitting topical
category), adjectives, affixes, connectors for phrase names (`maison-du-vin`), cities,
and a few words with diacritics for IDN names. Everything is plain ASCII except
`idn`, which is punycode-encoded when used.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Lang", "LANGS", "THEMES", "THEME_TOPICS", "BRAND_SYLLABLES", "BRAND_ENDINGS"]

THEMES = ("biz", "tech", "health", "home", "travel", "food", "sport", "arts", "shop", "news", "science", "games")


def _w(text: str) -> tuple[str, ...]:
    return tuple(text.split())


@dataclass(frozen=True)
class Lang:
    key: str
    code: str  # content-language code as the service writes it (upper case)
    world: str  # Majestic-style "World/<language>" topic, "" for English
    themes: dict[str, tuple[str, ...]]
    adjectives: tuple[str, ...]
    prefixes: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()
    connectors: tuple[str, ...] = ()
    adj_after: bool = False  # romance languages: "maisonbleue"
    cities: tuple[str, ...] = ()
    idn: tuple[str, ...] = ()
    nouns: tuple[str, ...] = field(default=(), init=False)

    def __post_init__(self) -> None:
        seen: dict[str, None] = {}
        for words in self.themes.values():
            for word in words:
                seen.setdefault(word, None)
        object.__setattr__(self, "nouns", tuple(seen))


EN = Lang(
    "en",
    "EN",
    "",
    themes={
        "biz": _w("""consult capital partners ventures finance invest trade market agency office ledger payroll tax
            legal law insure lending credit wealth equity brand marketing sales leads startup supply logistics freight
            cargo summit pioneer anchor harbor beacon bridge keystone realty property estate builder roofing plumbing
            contractor staffing talent career hire payment invoice accounting advisor broker mortgage loan"""),
        "tech": _w("""cloud data code byte pixel logic stack app web net cyber digital tech soft dev bot robot quantum
            signal server host link node grid matrix vector sync smart mobile device gadget chip laptop phone
            software hosting domain network secure privacy crypto token chain script api wireless"""),
        "health": _w("""health care clinic dental smile vita vital
            wellness fit fitness yoga pilates therapy physio nurse
            medic pharma herbal natural nutrition diet sleep mind calm spa skin beauty derma vision hearing
            senior recovery rehab massage doctor"""),
        "home": _w("""home house garden kitchen decor interior furniture sofa lamp roof floor window door paint build
            craft cleaning maid pet dog cat family baby kids nest cottage cabin oak maple pine cedar porch patio
            yard lawn flower rose tulip quilt candle"""),
        "travel": _w("""travel trip tour voyage holiday beach island mountain
            lake river trail camp hike surf sail cruise
            hotel villa lodge resort fishing bike ride road journey explore wild safari coast harbour valley
            canyon desert forest meadow"""),
        "food": _w("""food recipe bakery bread cafe coffee tea wine beer brew grill bbq pizza burger taco sushi vegan
            organic farm fresh sweet candy chocolate cheese spice honey lemon cherry apple kitchen diner bistro
            cookie cupcake pasta noodle soup salad juice"""),
        "sport": _w("""sport golf tennis soccer football hockey rugby running runner cycling gym boxing martial team
            league club arena stadium coach score goal champion racing ski snow skate climb paddle rowing
            marathon"""),
        "arts": _w("""art arts studio gallery music sound song band guitar piano film movie photo camera design draw
            canvas poetry story book novel theater dance ink color sketch poster print vinyl records"""),
        "shop": _w("""shop store outlet deals bargain boutique fashion style wear shoes bags jewel watch gift toys mall
            cart basket trend luxe vintage retro denim leather linen cotton silk beads"""),
        "news": _w("""news daily times post herald journal report press tribune gazette voice today weekly review
            insight forum community civic city town local people hope faith church school academy learn college
            campus library alumni chapter"""),
        "science": _w("""science lab research bio gene eco green solar energy planet earth space star astro physics
            chem math geo ocean climate nature atom carbon fossil orbit"""),
        "games": _w("""game games play player arcade quest puzzle chess level guild battle hero legend dragon ninja
            dice card board retro pixel"""),
    },
    adjectives=_w("""blue green red golden silver bright happy smart quick bold pure true fresh wild urban royal prime
        first best top great little big modern simple clever lucky sunny northern southern eastern western global
        local total open free new old classic premier elite noble rapid swift silent gentle cozy crystal diamond
        epic grand magic mega micro nova next better easy black white purple orange"""),
    prefixes=_w("my the get go try we your all i e"),
    suffixes=_w("""studio hub lab labs online media group shop store works zone world point spot base center guide
        help pro hq now direct co inc plus land house place life daily net web box link line way go today"""),
    connectors=_w("and and of"),
    cities=_w("""london boston austin denver seattle chicago dallas miami atlanta phoenix portland houston brooklyn
        toronto vancouver sydney melbourne dublin leeds bristol manchester glasgow oxford cambridge"""),
)

FR = Lang(
    "fr",
    "FR",
    "World/Français",
    themes={
        "biz": _w("""immobilier immo agence conseil avocat notaire expert comptable assurance credit finance bourse
            artisan plombier electricien menuisier peintre couvreur renovation courtier patrimoine gestion
            entreprise bureau"""),
        "tech": _w("""web numerique informatique reseau logiciel donnees
            site internet mobile appli pixel robot code"""),
        "health": _w("""sante medecin dentaire pharmacie beaute coiffure yoga massage kine osteo infirmier soins
            naturopathe optique bienetre"""),
        "home": _w("""maison jardin cuisine deco meuble atelier jardinier piscine terrasse villa chalet famille
            enfant bebe chat chien fleur rose lavande"""),
        "travel": _w("""voyage vacances gite camping hotel auberge velo rando mer plage montagne lac riviere foret
            soleil ile port escapade"""),
        "food": _w("""vin vins cave chateau fromage pain boulangerie patisserie cafe bistro restaurant chef recette
            gourmand terroir ferme miel olive epicerie chocolat crepe brasserie"""),
        "sport": _w("""sport foot rugby tennis golf club equipe course velo natation judo danse"""),
        "arts": _w("""photo musique cinema theatre danse livre lecture creation art galerie dessin chanson"""),
        "shop": _w("""mode chaussure bijoux cadeau boutique marche jouet sac vetement lingerie"""),
        "news": _w("""info actu journal presse blog annuaire guide association mairie ville village ecole formation
            cours patrimoine histoire"""),
        "science": _w("""science nature energie solaire climat terre espace ecologie"""),
        "games": _w("""jeu jeux joueur puzzle echecs carte"""),
    },
    adjectives=_w("""bleu vert rouge blanc noir petit grand beau belle bon bonne doux douce vrai nouveau vieux joli
        jolie libre royal pur sauvage heureux malin rapide premier meilleur fin chic"""),
    prefixes=_w("le la les mon ma mes"),
    suffixes=_w("france pro plus net online services conseil expert facile malin"),
    connectors=_w("de du des la le et en au aux"),
    adj_after=True,
    cities=_w("""paris lyon marseille bordeaux nantes lille toulouse nice rennes montpellier strasbourg grenoble
        dijon angers reims tours annecy avignon provence bretagne normandie alsace savoie corse"""),
    idn=("café", "thé", "crème", "château", "forêt", "île", "épicerie", "santé", "été", "élégance"),
)

DE = Lang(
    "de",
    "DE",
    "World/Deutsch",
    themes={
        "biz": _w("""immobilien makler anwalt kanzlei steuer berater versicherung finanz kredit handwerk sanitaer
            elektro maler dach tischler schreiner bau firma buero verwaltung"""),
        "tech": _w("""web netz digital software daten technik computer handy server code"""),
        "health": _w("""gesundheit arzt zahnarzt praxis apotheke pflege therapie yoga massage schoenheit friseur
            physio heilpraktiker optiker"""),
        "home": _w("""haus garten kueche moebel deko wohnen heim familie kinder hund katze blumen rosen"""),
        "travel": _w("""reise urlaub ferien berg see wald fluss strand rad fahrrad hotel pension camping insel"""),
        "food": _w("""wein bier brot baeckerei metzgerei cafe restaurant gasthof kaese honig hof bauernhof kaffee
            kuchen brauerei"""),
        "sport": _w("""sport fussball tennis golf verein turnen laufen reiten ski"""),
        "arts": _w("""foto musik kino theater tanz buch kunst galerie atelier"""),
        "shop": _w("""mode schuhe schmuck geschenk laden markt shop spielzeug taschen"""),
        "news": _w("""nachrichten zeitung blog verein stadt dorf heimat land schule kita bildung"""),
        "science": _w("""wissen natur energie solar umwelt klima forschung"""),
        "games": _w("""spiel spiele spieler raetsel schach karten"""),
    },
    adjectives=_w("""blau gruen rot weiss schwarz klein gross schoen gut neu alt frisch echt frei wild klar stark
        schnell bio"""),
    prefixes=_w("mein dein unser der die das"),
    suffixes=_w("welt zentrum service profi online shop partner direkt portal"),
    connectors=_w("und am im zum zur von"),
    cities=_w("""berlin hamburg muenchen koeln frankfurt stuttgart dresden leipzig bremen hannover nuernberg bonn
        mainz kiel freiburg wien graz linz salzburg zuerich bern basel"""),
    idn=("küche", "bäckerei", "schön", "grün", "größe", "müller", "straße", "bücher", "gemüse", "zahnärzte"),
)

IT = Lang(
    "it",
    "IT",
    "World/Italiano",
    themes={
        "biz": _w("""immobiliare agenzia avvocato studio consulenza assicurazioni finanza artigiano idraulico
            elettricista edilizia impresa ufficio commercialista"""),
        "tech": _w("""web digitale informatica rete software dati internet mobile codice"""),
        "health": _w("""salute medico dentista farmacia bellezza benessere yoga massaggi fisioterapia ottica"""),
        "home": _w("""casa giardino arredamento mobili design famiglia bambini cane gatto fiori"""),
        "travel": _w("""viaggi vacanze mare spiaggia montagna lago fiume bosco sole albergo hotel bici isola"""),
        "food": _w("""cucina vino pizza pasta pane forno caffe gelato trattoria osteria ristorante miele olio
            formaggio cantina pasticceria"""),
        "sport": _w("""sport calcio tennis golf palestra corsa ciclismo squadra"""),
        "arts": _w("""foto musica cinema teatro danza libri arte galleria"""),
        "shop": _w("""moda scarpe gioielli regali negozio mercato borse giocattoli"""),
        "news": _w("""notizie giornale blog associazione citta paese borgo scuola"""),
        "science": _w("""scienza natura energia solare ambiente terra"""),
        "games": _w("""gioco giochi carte scacchi"""),
    },
    adjectives=_w("""bello bella buono nuovo vecchio piccolo grande verde
        rosso bianco nero blu dolce vero libero fresco antico"""),
    prefixes=_w("il la mio"),
    suffixes=_w("italia online service point store club"),
    connectors=_w("di del della il la e"),
    adj_after=True,
    cities=_w("""roma milano napoli torino firenze venezia bologna genova palermo verona bari catania padova
        toscana sicilia sardegna puglia"""),
    idn=("caffè", "città", "più", "perché", "virtù"),
)

ES = Lang(
    "es",
    "ES",
    "World/Español",
    themes={
        "biz": _w("""inmobiliaria agencia abogado asesoria seguros finanzas credito reformas fontanero electricista
            construccion empresa oficina gestoria"""),
        "tech": _w("""web digital informatica red software datos internet movil codigo"""),
        "health": _w("""salud medico dental farmacia belleza bienestar yoga masajes fisio optica clinica"""),
        "home": _w("""casa jardin hogar muebles diseno familia ninos perro gato flores"""),
        "travel": _w("""viajes vacaciones mar playa montana lago rio bosque sol hotel hostal bici isla"""),
        "food": _w("""cocina vino tapas pan panaderia cafe restaurante miel aceite queso bodega churros"""),
        "sport": _w("""deporte futbol tenis golf gimnasio carrera ciclismo equipo"""),
        "arts": _w("""foto musica cine teatro baile libros arte galeria"""),
        "shop": _w("""moda zapatos joyas regalos tienda mercado bolsos juguetes"""),
        "news": _w("""noticias diario blog club ciudad pueblo escuela"""),
        "science": _w("""ciencia naturaleza energia solar ambiente tierra"""),
        "games": _w("""juego juegos cartas ajedrez"""),
    },
    adjectives=_w("""bueno buena nuevo nueva viejo pequeno grande verde rojo azul blanco negro dulce libre fresco
        feliz bonito mejor real"""),
    prefixes=_w("el la mi tu"),
    suffixes=_w("online express plus web pro center"),
    connectors=_w("de del la el y los las"),
    adj_after=True,
    cities=_w("""madrid barcelona valencia sevilla bilbao malaga zaragoza granada bogota medellin cali lima mexico
        cancun santiago quito montevideo"""),
    idn=("niño", "españa", "diseño", "montaña", "señor"),
)

NL = Lang(
    "nl",
    "NL",
    "World/Nederlands",
    themes={
        "biz": _w("""makelaar advocaat advies verzekering financien klus loodgieter elektricien bouw bedrijf kantoor
            boekhouding"""),
        "tech": _w("""web digitaal software data internet mobiel code"""),
        "health": _w("""gezondheid dokter tandarts apotheek zorg schoonheid kapper yoga massage fysio"""),
        "home": _w("""huis tuin keuken wonen meubel gezin kinderen hond kat bloemen tulp"""),
        "travel": _w("""reizen vakantie zee strand berg meer rivier bos zon fiets hotel camping"""),
        "food": _w("""wijn bier brood bakkerij koffie cafe restaurant kaas honing molen"""),
        "sport": _w("""sport voetbal tennis golf hockey schaatsen"""),
        "arts": _w("""foto muziek film theater dans boek kunst"""),
        "shop": _w("""mode schoenen sieraden cadeau winkel markt"""),
        "news": _w("""nieuws krant blog vereniging stad dorp school"""),
        "science": _w("""wetenschap natuur energie zonne klimaat"""),
        "games": _w("""spel spellen puzzel"""),
    },
    adjectives=_w("blauw groen rood wit zwart klein groot mooi goed nieuw oud vers echt vrij snel lekker gezellig"),
    prefixes=_w("de het mijn"),
    suffixes=_w("online winkel shop centrum service plus"),
    connectors=_w("van de het en"),
    cities=_w("""amsterdam rotterdam utrecht denhaag eindhoven groningen breda nijmegen haarlem leiden gent
        antwerpen brugge leuven"""),
)

PT = Lang(
    "pt",
    "PT",
    "World/Português",
    themes={
        "biz": _w("imobiliaria agencia advogado seguros financas obras empresa escritorio contabilidade"),
        "tech": _w("web digital informatica rede software dados internet"),
        "health": _w("saude medico dentista farmacia beleza clinica"),
        "home": _w("casa jardim cozinha moveis familia criancas flores"),
        "travel": _w("viagem ferias mar praia serra lago rio sol hotel"),
        "food": _w("vinho pao padaria cafe restaurante mel azeite queijo"),
        "sport": _w("desporto futebol tenis academia"),
        "arts": _w("foto musica cinema livros arte"),
        "shop": _w("moda sapatos joias presentes loja mercado"),
        "news": _w("noticias jornal blog clube cidade aldeia escola"),
        "science": _w("ciencia natureza energia solar"),
        "games": _w("jogo jogos"),
    },
    adjectives=_w("""bom boa novo nova velho pequeno grande verde vermelho azul branco preto doce livre fresco feliz
        bonito melhor"""),
    prefixes=_w("o a meu"),
    suffixes=_w("online brasil portugal plus"),
    connectors=_w("do da de e"),
    adj_after=True,
    cities=_w("lisboa porto braga coimbra faro saopaulo brasilia recife salvador curitiba"),
    idn=("pão", "coração", "limão", "maçã"),
)

JA = Lang(
    "ja",
    "JA",
    "World/Japanese",
    themes={
        "biz": _w("fudosan hoken shigoto tenshoku kaisha jimusho zeirishi bengoshi kyujin"),
        "tech": _w("web net app soft data code denki pc sumaho"),
        "health": _w("kenko biyou kaigo iryo shika seitai yoga esute"),
        "home": _w("ie kurashi kagu zakka niwa kodomo inu neko hana"),
        "travel": _w("tabi onsen ryokan yama kawa umi sora mori hokkaido okinawa"),
        "food": _w("ramen sushi soba udon sake cha matcha wagashi gohan washoku pan"),
        "sport": _w("sports yakyu golf tennis judo karate"),
        "arts": _w("shashin ongaku eiga hon manga anime"),
        "shop": _w("kimono fashion shop zakka gift"),
        "news": _w("news nikki juku gakko eigo machi mura"),
        "science": _w("kagaku shizen hoshi tsuki"),
        "games": _w("game asobi shogi"),
    },
    adjectives=_w("shin yasui tanoshii oishii kirei genki happy shiro kuro aka ao midori"),
    suffixes=_w("navi labo style life net info ya do kan club plus times guide"),
    cities=_w("tokyo osaka kyoto yokohama nagoya sapporo fukuoka kobe sendai hiroshima nara"),
)

PL = Lang(
    "pl",
    "PL",
    "World/Polska",
    themes={
        "biz": _w("""nieruchomosci biuro adwokat doradztwo ubezpieczenia finanse kredyt remonty hydraulik elektryk
            budowa firma"""),
        "tech": _w("web sieci software dane internet kod"),
        "health": _w("zdrowie lekarz dentysta apteka uroda fryzjer joga masaz"),
        "home": _w("dom ogrod kuchnia meble rodzina dzieci pies kwiaty"),
        "travel": _w("podroze wakacje morze plaza gory jezioro rzeka las slonce rower hotel"),
        "food": _w("wino chleb piekarnia kawa restauracja miod"),
        "sport": _w("sport pilka tenis silownia"),
        "arts": _w("foto muzyka kino teatr taniec ksiazki"),
        "shop": _w("moda buty bizuteria prezenty sklep rynek"),
        "news": _w("wiadomosci gazeta blog klub miasto wies szkola"),
        "science": _w("nauka natura energia"),
        "games": _w("gry gra"),
    },
    adjectives=_w("""nowy stary maly duzy zielony czerwony niebieski bialy
        czarny dobry piekny swiezy wolny polski super eko"""),
    suffixes=_w("online sklep serwis centrum plus"),
    cities=_w("warszawa krakow gdansk wroclaw poznan lodz szczecin lublin katowice torun"),
    idn=("łódź", "kraków", "słońce", "zdrój"),
)

CS = Lang(
    "cs",
    "CS",
    "World/Česky",
    themes={
        "biz": _w("reality kancelar advokat poradenstvi pojisteni finance uver stavby instalater elektrikar firma"),
        "tech": _w("web sit software data internet"),
        "health": _w("zdravi lekar zubar lekarna krasa kadernictvi joga masaze"),
        "home": _w("dum zahrada kuchyne nabytek rodina deti pes kvetiny"),
        "travel": _w("cestovani dovolena hory jezero reka les slunce kolo hotel penzion"),
        "food": _w("vino pivo chleb pekarna kava restaurace med pivovar"),
        "sport": _w("sport fotbal tenis hokej"),
        "arts": _w("foto hudba kino divadlo knihy"),
        "shop": _w("moda boty sperky darky obchod trh"),
        "news": _w("zpravy noviny blog klub mesto vesnice skola"),
        "science": _w("veda priroda energie"),
        "games": _w("hry hra"),
    },
    adjectives=_w("novy stary maly velky zeleny cerveny modry bily cerny dobry krasny cerstvy volny cesky eko"),
    suffixes=_w("online shop servis centrum plus"),
    cities=_w("praha brno ostrava plzen olomouc liberec bratislava kosice zilina nitra"),
    idn=("dům", "kuchyně", "pivovarů", "zahrádka"),
)

SV = Lang(
    "sv",
    "SV",
    "World/Svenska",
    themes={
        "biz": _w("maklare bostad advokat radgivning forsakring ekonomi bygg ror foretag kontor"),
        "tech": _w("webb data digital mjukvara natet"),
        "health": _w("halsa lakare tandlakare apotek skonhet frisor yoga massage"),
        "home": _w("hus tradgard kok mobler familj barn hund katt blommor"),
        "travel": _w("resor semester hav strand fjall sjo alv skog sol cykel hotell"),
        "food": _w("vin brod bageri kaffe restaurang honung"),
        "sport": _w("sport fotboll tennis golf hockey"),
        "arts": _w("foto musik bio teater dans bok konst"),
        "shop": _w("mode skor smycken present butik torg"),
        "news": _w("nyheter tidning blogg forening stad skola"),
        "science": _w("vetenskap natur energi"),
        "games": _w("spel"),
    },
    adjectives=_w("bla gron rod vit svart liten stor fin bra ny gammal farsk fri vild snabb glad svensk"),
    suffixes=_w("online butiken sverige center plus"),
    cities=_w("stockholm goteborg malmo uppsala lund umea orebro linkoping vasteras"),
    idn=("trädgård", "kök", "skön", "färsk", "smörgås"),
)

DA = Lang(
    "da",
    "DA",
    "World/Dansk",
    themes={
        "biz": _w("bolig advokat raadgivning forsikring okonomi byg vvs firma kontor"),
        "tech": _w("web data digital software net"),
        "health": _w("sundhed laege tandlaege apotek skonhed frisor yoga massage"),
        "home": _w("hus have kokken mobler familie born hund kat blomster"),
        "travel": _w("rejser ferie hav strand skov sol cykel hotel"),
        "food": _w("vin brod bageri kaffe restaurant honning"),
        "sport": _w("sport fodbold tennis golf haandbold"),
        "arts": _w("foto musik biograf teater dans bog kunst"),
        "shop": _w("mode sko smykker gave butik marked"),
        "news": _w("nyheder avis blog forening by skole"),
        "science": _w("videnskab natur energi"),
        "games": _w("spil"),
    },
    adjectives=_w("bla gron rod hvid sort lille stor smuk god ny gammel frisk fri vild hurtig glad dansk"),
    suffixes=_w("online butik danmark center plus"),
    cities=_w("kobenhavn aarhus odense aalborg esbjerg randers kolding vejle roskilde"),
    idn=("køkken", "grøn", "sø", "bær", "smørrebrød"),
)

NO = Lang(
    "no",
    "NO",
    "World/Norsk",
    themes={
        "biz": _w("bolig advokat forsikring okonomi bygg rorlegger firma kontor"),
        "tech": _w("web data digital"),
        "health": _w("helse lege tannlege apotek frisor yoga"),
        "home": _w("hus hage kjokken mobler familie barn hund"),
        "travel": _w("reise ferie hav strand fjell sjo skog sol sykkel hotell"),
        "food": _w("vin brod bakeri kaffe restaurant honning"),
        "sport": _w("sport fotball ski"),
        "arts": _w("foto musikk kino teater bok"),
        "shop": _w("mote sko smykker gave butikk marked"),
        "news": _w("nyheter avis blogg forening by skole"),
        "science": _w("natur energi"),
        "games": _w("spill"),
    },
    adjectives=_w("bla gronn rod hvit svart liten stor fin god ny gammel fersk fri vill rask glad norsk"),
    suffixes=_w("online butikken norge senter"),
    cities=_w("oslo bergen trondheim stavanger tromso drammen kristiansand"),
    idn=("kjøkken", "grønn", "sjø", "blåbær"),
)

FI = Lang(
    "fi",
    "FI",
    "World/Suomi",
    themes={
        "biz": _w("asunto lakitoimisto vakuutus talous rakennus putki sahko yritys toimisto"),
        "tech": _w("web data digi netti"),
        "health": _w("terveys laakari hammas apteekki kauneus kampaamo jooga hieronta"),
        "home": _w("talo puutarha keittio koti huonekalu perhe lapset koira"),
        "travel": _w("matka loma meri ranta tunturi jarvi joki metsa aurinko pyora hotelli"),
        "food": _w("viini olut leipa leipomo kahvi ravintola hunaja"),
        "sport": _w("urheilu jalkapallo jaakiekko"),
        "arts": _w("kuva musiikki elokuva teatteri kirja"),
        "shop": _w("muoti kengat koru lahja kauppa tori"),
        "news": _w("uutiset lehti blogi yhdistys kaupunki kyla koulu"),
        "science": _w("tiede luonto energia"),
        "games": _w("peli pelit"),
    },
    adjectives=_w("""sininen vihrea punainen valkoinen musta pieni iso kaunis
        hyva uusi vanha tuore vapaa villi nopea iloinen"""),
    suffixes=_w("netti kauppa keskus plus"),
    cities=_w("helsinki espoo tampere turku oulu jyvaskyla lahti kuopio"),
    idn=("järvi", "metsä", "sää", "yö"),
)

ID = Lang(
    "id",
    "ID",
    "World/Bahasa Indonesia",
    themes={
        "biz": _w("properti tanah hukum konsultan asuransi keuangan kredit bangun renovasi usaha kantor jasa"),
        "tech": _w("web digital teknologi aplikasi data internet kode"),
        "health": _w("sehat dokter gigi apotek cantik salon yoga pijat klinik herbal"),
        "home": _w("rumah taman dapur mebel keluarga anak kucing bunga"),
        "travel": _w("wisata liburan laut pantai gunung danau sungai hutan matahari sepeda hotel pulau"),
        "food": _w("kopi teh roti kue makanan warung resto sambal madu rendang bakso"),
        "sport": _w("olahraga sepakbola badminton futsal"),
        "arts": _w("foto musik film buku seni batik"),
        "shop": _w("busana sepatu perhiasan hadiah toko pasar baju tas"),
        "news": _w("berita koran blog komunitas kota desa sekolah"),
        "science": _w("ilmu alam energi tani"),
        "games": _w("game main"),
    },
    adjectives=_w("""baru lama kecil besar hijau merah biru putih hitam baik indah segar bebas cepat murah maju jaya
        sejahtera mandiri abadi makmur"""),
    suffixes=_w("ku kita id online indo nusantara jaya"),
    adj_after=True,
    cities=_w("jakarta bandung surabaya bali jogja medan semarang malang makassar solo bogor depok bekasi tangerang"),
)

RO = Lang(
    "ro",
    "RO",
    "World/Română",
    themes={
        "biz": _w("imobiliare avocat consultanta asigurari finante constructii firma"),
        "tech": _w("web digital internet"),
        "health": _w("sanatate medic dentist farmacie frumusete salon"),
        "home": _w("casa gradina bucatarie mobila familie copii"),
        "travel": _w("calatorii vacanta mare plaja munte lac padure soare hotel pensiune"),
        "food": _w("vin paine cafea restaurant miere"),
        "sport": _w("sport fotbal"),
        "arts": _w("foto muzica carti"),
        "shop": _w("moda pantofi bijuterii cadouri magazin piata"),
        "news": _w("stiri ziar blog oras sat scoala"),
        "science": _w("stiinta natura energie"),
        "games": _w("jocuri"),
    },
    adjectives=_w("nou vechi mic verde rosu albastru alb negru bun frumos proaspat liber rapid"),
    suffixes=_w("online romania plus"),
    adj_after=True,
    cities=_w("bucuresti cluj iasi timisoara constanta brasov sibiu oradea"),
)

HU = Lang(
    "hu",
    "HU",
    "World/Magyar",
    themes={
        "biz": _w("ingatlan ugyved tanacsado biztositas penzugy epites ceg"),
        "tech": _w("web digital net"),
        "health": _w("egeszseg orvos fogorvos patika szepseg fodrasz"),
        "home": _w("haz kert konyha butor csalad gyerek"),
        "travel": _w("utazas nyaralas hegy folyo erdo nap hotel panzio"),
        "food": _w("bor kenyer pekseg kave etterem mez"),
        "sport": _w("sport foci"),
        "arts": _w("foto zene konyv"),
        "shop": _w("divat cipo ekszer ajandek bolt piac"),
        "news": _w("hirek ujsag blog varos falu iskola"),
        "science": _w("tudomany termeszet"),
        "games": _w("jatek"),
    },
    adjectives=_w("uj regi kis nagy zold piros kek feher fekete jo szep friss szabad gyors magyar"),
    suffixes=_w("online bolt plusz"),
    cities=_w("budapest debrecen szeged miskolc pecs gyor sopron eger"),
    idn=("ház", "kávé", "szép", "kenyér"),
)

TR = Lang(
    "tr",
    "TR",
    "World/Türkçe",
    themes={
        "biz": _w("emlak avukat danismanlik sigorta finans insaat firma"),
        "tech": _w("web dijital yazilim internet"),
        "health": _w("saglik doktor dis eczane guzellik kuafor"),
        "home": _w("ev bahce mutfak mobilya aile cocuk"),
        "travel": _w("seyahat tatil deniz plaj dag gol nehir orman gunes otel"),
        "food": _w("ekmek firin kahve cay lokanta restoran bal"),
        "sport": _w("spor futbol"),
        "arts": _w("foto muzik kitap"),
        "shop": _w("moda ayakkabi taki hediye magaza pazar"),
        "news": _w("haber gazete blog sehir koy okul"),
        "science": _w("bilim doga enerji"),
        "games": _w("oyun"),
    },
    adjectives=_w("yeni eski kucuk buyuk yesil kirmizi mavi beyaz siyah iyi guzel taze ozgur hizli"),
    suffixes=_w("online market plus"),
    cities=_w("istanbul ankara izmir bursa antalya adana konya trabzon"),
    idn=("güneş", "çiçek", "şehir", "güzel"),
)

LANGS: dict[str, Lang] = {
    lang.key: lang for lang in (EN, FR, DE, IT, ES, NL, PT, JA, PL, CS, SV, DA, NO, FI, ID, RO, HU, TR)
}

# Brandable names (NamePros, NameShift): pronounceable consonant-vowel syllables.
BRAND_SYLLABLES = _w("""ka lo ri ve zo na mi tu sa ne ra vi lu mo ta be ko li da fi ga ze no pa so le ma ti
    ro ny vo ax el or an is um en ar zen vex tor lum nix sol pix ova ari""")
BRAND_ENDINGS = _w("a o ia io ex ly fy ify era ora ix on ity eo ara")

# Topical categories by theme: "Category/Sub" paths, Category from the seed's 16.
THEME_TOPICS: dict[str, tuple[str, ...]] = {
    "biz": (
        "Business/Financial Services",
        "Business/Marketing and Advertising",
        "Business/Real Estate",
        "Business/Consulting",
        "Business/Construction and Maintenance",
        "Society/Law",
        "Business/Employment",
    ),
    "tech": (
        "Computers/Internet/Web Design and Development",
        "Computers/Software",
        "Computers/Internet",
        "Computers/Hardware",
        "Business/E-Commerce",
        "Computers/Security",
    ),
    "health": (
        "Health/Fitness",
        "Health/Medicine",
        "Health/Dentistry",
        "Health/Alternative",
        "Health/Nutrition",
        "Shopping/Health",
        "Health/Beauty",
    ),
    "home": (
        "Home/Gardening",
        "Home/Home Improvement",
        "Home/Family",
        "Home/Cooking",
        "Shopping/Home and Garden",
        "Recreation/Pets",
    ),
    "travel": (
        "Recreation/Travel",
        "Recreation/Outdoors",
        "Recreation/Travel/Lodging",
        "Recreation/Boating",
        "Sports/Cycling",
    ),
    "food": ("Home/Cooking", "Recreation/Food", "Shopping/Food", "Business/Hospitality", "Recreation/Food/Drink/Wine"),
    "sport": (
        "Sports/Soccer",
        "Sports/Golf",
        "Sports/Tennis",
        "Sports/Running",
        "Sports/Cycling",
        "Sports/Winter Sports",
    ),
    "arts": ("Arts/Music", "Arts/Photography", "Arts/Movies", "Arts/Literature", "Arts/Design", "Arts/Performing Arts"),
    "shop": (
        "Shopping/Clothing",
        "Shopping/Gifts",
        "Shopping/Jewelry",
        "Shopping/Toys and Games",
        "Business/E-Commerce",
    ),
    "news": (
        "News/Newspapers",
        "News/Magazines and E-zines",
        "Society/Issues",
        "Reference/Education",
        "Society/Religion and Spirituality",
        "Society/Organizations",
        "News/Weblogs",
    ),
    "science": (
        "Science/Environment",
        "Science/Biology",
        "Science/Physics",
        "Science/Earth Sciences",
        "Science/Technology",
        "Reference/Libraries",
    ),
    "games": ("Games/Video Games", "Games/Board Games", "Games/Puzzles", "Games/Card Games", "Games/Gambling"),
}
