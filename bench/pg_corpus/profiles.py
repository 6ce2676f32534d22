"""Which columns of each database the PostgreSQL-dialect corpus asks about.

A profile is one table as an NL2SQL model would read it: a unique key, a measure, a column to
group by, a text column to search, a date stored as text (BIRD keeps dates as text; models
cast them with ``::date``), and the parent it references. Any of the optional ones may be
missing; the templates that need it then skip the profile. Names are as catalogued (quoted
as written); values for literals are read from the data when the corpus is generated.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Parent:
    fk: str  # column of the profile's table
    table: str
    key: str
    label: str  # a column to show for the parent


@dataclass(frozen=True)
class Profile:
    db: str
    table: str
    key: str
    num: str | None
    cat: str
    text: str | None
    date: str | None = None
    parent: Parent | None = None

    @property
    def name(self) -> str:
        return f"{self.db}.{self.table}"


PROFILES = [
    Profile("superhero", "superhero", "id", "weight_kg", "publisher_id", "full_name",
            parent=Parent("publisher_id", "publisher", "id", "publisher_name")),
    Profile("superhero", "superhero", "id", "height_cm", "alignment_id", "superhero_name",
            parent=Parent("race_id", "race", "id", "race")),
    Profile("superhero", "superhero", "id", "height_cm", "gender_id", "superhero_name",
            parent=Parent("eye_colour_id", "colour", "id", "colour")),
    Profile("california_schools", "satscores", "cds", "AvgScrMath", "rtype", "sname",
            parent=Parent("cds", "schools", "CDSCode", "County")),
    Profile("california_schools", "frpm", "CDSCode", "Enrollment (K-12)", "County Name",
            "School Name", parent=Parent("CDSCode", "schools", "CDSCode", "City")),
    Profile("card_games", "cards", "id", "convertedManaCost", "rarity", "name"),
    Profile("card_games", "sets", "id", "totalSetSize", "type", "name", "releaseDate"),
    Profile("codebase_community", "posts", "Id", "Score", "PostTypeId", "Title", "CreaionDate",
            Parent("OwnerUserId", "users", "Id", "DisplayName")),
    Profile("codebase_community", "users", "Id", "Reputation", "Location", "DisplayName",
            "CreationDate"),
    Profile("debit_card_specializing", "transactions_1k", "TransactionID", "Price", "ProductID",
            None, "Date", Parent("GasStationID", "gasstations", "GasStationID", "Country")),
    Profile("european_football_2", "Player_Attributes", "id", "overall_rating", "preferred_foot",
            "attacking_work_rate", "date"),
    Profile("european_football_2", "Player", "id", "weight", "height", "player_name", "birthday"),
    Profile("financial", "loan", "loan_id", "amount", "duration", "status", "date",
            Parent("account_id", "account", "account_id", "frequency")),
    Profile("financial", "trans", "trans_id", "amount", "type", "operation", "date",
            Parent("account_id", "account", "account_id", "frequency")),
    Profile("formula_1", "races", "raceId", "round", "year", "name", "date",
            Parent("circuitId", "circuits", "circuitId", "country")),
    Profile("formula_1", "drivers", "driverId", "number", "nationality", "surname", "dob"),
    Profile("student_club", "expense", "expense_id", "cost", "approved", "expense_description",
            "expense_date", Parent("link_to_member", "member", "member_id", "last_name")),
    Profile("student_club", "budget", "budget_id", "spent", "category", "event_status",
            parent=Parent("link_to_event", "event", "event_id", "event_name")),
    Profile("thrombosis_prediction", "Patient", "ID", None, "SEX", "Diagnosis", "Birthday"),
    Profile("toxicology", "atom", "atom_id", None, "element", "atom_id",
            parent=Parent("molecule_id", "molecule", "molecule_id", "label")),
]
