package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base32"
	"errors"
	"fmt"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/mafiamail/mafiamail/engine"
)

// Game is one game's row. Its state lives in its events.
type Game struct {
	ID        string
	Status    string
	CreatedAt time.Time
	UpdatedAt time.Time
	// Deadline is the next instant the game's clock must act; zero for none.
	Deadline time.Time
}

// Participant kinds.
const (
	KindPlayer   = "player"
	KindReferee  = "referee"
	KindObserver = "observer"
)

// Participant statuses.
const (
	StatusActive   = "active"
	StatusReplaced = "replaced"
	StatusRemoved  = "removed"
)

// Participant is a player, the referee or an observer of one game.
type Participant struct {
	Game  string
	Token string
	Name  string
	// Address is the participant's mail address as given.
	Address string
	Kind    string
	// Role is "" until the roles are drawn.
	Role     string
	Status   string
	JoinedAt time.Time
}

// ValidGameID reports whether id is a valid game name: the engine's, which
// is the one place that says what a game's name is.
func ValidGameID(id string) bool { return engine.ValidGameID(id) }

// CreateGame adds a game; ErrExists if the id is taken.
func (tx *Tx) CreateGame(ctx context.Context, id, status string, now time.Time) error {
	if !ValidGameID(id) {
		return fmt.Errorf("store: invalid game id %q: want 2-20 lower-case letters and digits", id)
	}
	_, err := tx.q.ExecContext(ctx,
		`INSERT INTO games (id, status, created_at, updated_at) VALUES (?, ?, ?, ?)`,
		id, status, toNanos(now), toNanos(now))
	if isConstraint(err, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY) {
		return fmt.Errorf("store: create game %s: %w", id, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("store: create game %s: %w", id, err)
	}
	return nil
}

// SetGameStatus records a game's status ("signup", "running", "ended", ...:
// the values are the caller's).
func (tx *Tx) SetGameStatus(ctx context.Context, id, status string, now time.Time) error {
	return tx.updateGame(ctx, id, "status = ?, updated_at = ?", status, toNanos(now))
}

// SetGameDeadline records when the game's clock must next act; the zero
// time clears it. Set it in the transaction that changed the game, so that
// a deadline can never be lost or applied twice across a restart.
func (tx *Tx) SetGameDeadline(ctx context.Context, id string, deadline, now time.Time) error {
	return tx.updateGame(ctx, id, "deadline = ?, updated_at = ?", nullNanos(deadline), toNanos(now))
}

func (tx *Tx) updateGame(ctx context.Context, id, set string, args ...any) error {
	res, err := tx.q.ExecContext(ctx, "UPDATE games SET "+set+" WHERE id = ?", append(args, id)...)
	if err != nil {
		return fmt.Errorf("store: update game %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: update game %s: %w", id, ErrNotFound)
	}
	return nil
}

const gameCols = `id, status, created_at, updated_at, deadline`

func scanGame(sc interface{ Scan(...any) error }) (Game, error) {
	var g Game
	var created, updated int64
	var deadline sql.NullInt64
	if err := sc.Scan(&g.ID, &g.Status, &created, &updated, &deadline); err != nil {
		return Game{}, err
	}
	g.CreatedAt, g.UpdatedAt, g.Deadline = fromNanos(created), fromNanos(updated), fromNullNanos(deadline)
	return g, nil
}

// Game returns one game; ErrNotFound if there is none.
func (r reader) Game(ctx context.Context, id string) (Game, error) {
	g, err := scanGame(r.q.QueryRowContext(ctx, `SELECT `+gameCols+` FROM games WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Game{}, fmt.Errorf("store: game %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Game{}, fmt.Errorf("store: game %s: %w", id, err)
	}
	return g, nil
}

// Games returns every game, oldest first.
func (r reader) Games(ctx context.Context) ([]Game, error) {
	return r.games(ctx, `SELECT `+gameCols+` FROM games ORDER BY created_at, id`)
}

// DueGames returns the games whose deadline is at or before now, earliest
// first.
func (r reader) DueGames(ctx context.Context, now time.Time) ([]Game, error) {
	return r.games(ctx, `SELECT `+gameCols+` FROM games
		WHERE deadline IS NOT NULL AND deadline <= ? ORDER BY deadline, id`, toNanos(now))
}

// NextDeadline returns the game whose deadline comes first; ok is false when
// no game has one.
func (r reader) NextDeadline(ctx context.Context) (g Game, ok bool, err error) {
	gs, err := r.games(ctx, `SELECT `+gameCols+` FROM games
		WHERE deadline IS NOT NULL ORDER BY deadline, id LIMIT 1`)
	if err != nil || len(gs) == 0 {
		return Game{}, false, err
	}
	return gs[0], true, nil
}

func (r reader) games(ctx context.Context, query string, args ...any) ([]Game, error) {
	rows, err := r.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: games: %w", err)
	}
	defer rows.Close()
	var gs []Game
	for rows.Next() {
		g, err := scanGame(rows)
		if err != nil {
			return nil, fmt.Errorf("store: games: %w", err)
		}
		gs = append(gs, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: games: %w", err)
	}
	return gs, nil
}

// tokenBytes is the randomness of a token: 80 bits, 16 base32 letters.
const tokenBytes = 10

var tokenEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewToken returns a fresh secret token: 80 bits from crypto/rand in
// lower-case base32 without padding.
func NewToken() string {
	b := make([]byte, tokenBytes)
	rand.Read(b) // never fails (crypto/rand)
	return tokenEncoding.EncodeToString(b)
}

// AddParticipant adds a participant with a fresh token. kind is KindPlayer,
// KindReferee or KindObserver.
func (tx *Tx) AddParticipant(ctx context.Context, game, name, address, kind string, now time.Time) (Participant, error) {
	p := Participant{
		Game: game, Name: name, Address: strings.TrimSpace(address),
		Kind: kind, Status: StatusActive, JoinedAt: fromNanos(toNanos(now)),
	}
	if name == "" || p.Address == "" {
		return Participant{}, fmt.Errorf("store: add participant to %s: name and address are required", game)
	}
	// A new token is in no one's hands yet, so nothing kept can be of
	// it; the rest of the transaction reads the table all the same, and
	// the new participant is kept once the transaction commits.
	tx.wroteParticipants = true
	// Tokens are numbered by the participants the game has had, so that a
	// host replaying its mailbox hands out the same ones (tokenFor).
	var seats int64
	if err := tx.q.QueryRowContext(ctx, `SELECT count(*) FROM participants WHERE game = ?`, game).Scan(&seats); err != nil {
		return Participant{}, fmt.Errorf("store: add participant to %s: %w", game, err)
	}
	// A collision in 80 random bits will not happen; retrying costs nothing.
	for attempt := range int64(3) {
		p.Token = tx.tokenFor(game, "token", seats+attempt<<32)
		_, err := tx.q.ExecContext(ctx, `INSERT INTO participants
			(game, token, name, address, kind, status, joined_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			p.Game, p.Token, p.Name, p.Address, p.Kind, p.Status, toNanos(now))
		if isConstraint(err, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY) {
			continue
		}
		if isConstraint(err, sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY) {
			return Participant{}, fmt.Errorf("store: add participant to %s: game %w", game, ErrNotFound)
		}
		if err != nil {
			return Participant{}, fmt.Errorf("store: add participant %q to %s: %w", name, game, err)
		}
		tx.written = append(tx.written, participantKey{p.Game, strings.ToLower(p.Token)})
		return p, nil
	}
	return Participant{}, fmt.Errorf("store: add participant %q to %s: token collisions", name, game)
}

// SetRole records a participant's drawn role.
func (tx *Tx) SetRole(ctx context.Context, game, token, role string) error {
	return tx.updateParticipant(ctx, game, token, "role = ?", nullString(role))
}

// SetParticipantName records the name a player chose instead of the one
// they signed up with (allowed until the game starts).
func (tx *Tx) SetParticipantName(ctx context.Context, game, token, name string) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("store: rename participant of %s: a name is required", game)
	}
	return tx.updateParticipant(ctx, game, token, "name = ?", name)
}

// SetParticipantStatus marks a participant active, replaced or removed. A
// replaced or removed participant's token stops working (see
// ActiveParticipantByToken).
func (tx *Tx) SetParticipantStatus(ctx context.Context, game, token, status string) error {
	return tx.updateParticipant(ctx, game, token, "status = ?", status)
}

func (tx *Tx) updateParticipant(ctx context.Context, game, token, set string, args ...any) error {
	tx.wroteParticipants = true
	tx.w.s.active.forget(game, token)
	tx.written = append(tx.written, participantKey{game, strings.ToLower(token)})
	res, err := tx.q.ExecContext(ctx, "UPDATE participants SET "+set+" WHERE game = ? AND token = ?",
		append(args, game, strings.ToLower(token))...)
	if err != nil {
		return fmt.Errorf("store: update participant of %s: %w", game, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: update participant of %s: %w", game, ErrNotFound)
	}
	return nil
}

const participantCols = `game, token, name, address, kind, role, status, joined_at`

func scanParticipant(sc interface{ Scan(...any) error }) (Participant, error) {
	var p Participant
	var role sql.NullString
	var joined int64
	if err := sc.Scan(&p.Game, &p.Token, &p.Name, &p.Address, &p.Kind, &role, &p.Status, &joined); err != nil {
		return Participant{}, err
	}
	p.Role, p.JoinedAt = role.String, fromNanos(joined)
	return p, nil
}

// ParticipantByToken finds a participant of any status by token; tokens are
// matched case-insensitively, since some mail systems change the case of
// addresses. ErrNotFound if there is none.
func (r reader) ParticipantByToken(ctx context.Context, game, token string) (Participant, error) {
	p, err := scanParticipant(r.q.QueryRowContext(ctx,
		`SELECT `+participantCols+` FROM participants WHERE game = ? AND token = ?`,
		game, strings.ToLower(token)))
	if errors.Is(err, sql.ErrNoRows) {
		return Participant{}, fmt.Errorf("store: participant of %s: %w", game, ErrNotFound)
	}
	if err != nil {
		return Participant{}, fmt.Errorf("store: participant of %s: %w", game, err)
	}
	return p, nil
}

// ActiveParticipantByToken is ParticipantByToken for active participants
// only: the token of someone replaced or removed is not found.
func (r reader) ActiveParticipantByToken(ctx context.Context, game, token string) (Participant, error) {
	p, err := r.ParticipantByToken(ctx, game, token)
	if err != nil {
		return Participant{}, err
	}
	if p.Status != StatusActive {
		return Participant{}, fmt.Errorf("store: participant of %s is %s: %w", game, p.Status, ErrNotFound)
	}
	return p, nil
}

// ActiveParticipantByToken is reader.ActiveParticipantByToken inside a
// write transaction, which the host asks for every message to a
// participant's address: a participant found is kept, in the store, for
// later transactions. Every write to the participants table goes through
// AddParticipant or updateParticipant: they make the rest of their
// transaction read the table, and updateParticipant forgets the row it
// changes, so a lookup never answers with a row other than the one the
// table holds, committed or not, and nothing the transaction wrote
// outlives its rollback. The participants a transaction wrote are kept
// once it commits, read back just before (readWritten): a player's first
// message after signing up or being dealt a role finds them kept, in a
// host of a thousand games as in a host of one. What is kept of other
// participants stays: a game that signs a player up or draws its roles
// leaves the other games' players kept. Tokens that are not found are not
// kept: made-up tokens cost a query each, as before, and take no memory.
func (tx *Tx) ActiveParticipantByToken(ctx context.Context, game, token string) (Participant, error) {
	active := &tx.w.s.active
	if tx.wroteParticipants {
		return tx.reader.ActiveParticipantByToken(ctx, game, token)
	}
	if p, ok := active.get(game, token); ok {
		return p, nil
	}
	p, err := tx.reader.ActiveParticipantByToken(ctx, game, token)
	if err == nil {
		active.put(p)
	}
	return p, err
}

// readWritten reads back, at the end of the transaction, the participants
// it added or changed that are active, for Update to keep once the commit
// succeeds. What a savepoint rolled back is read as the table holds it
// after the rollback: a participant it added is not found, one it changed
// is read as it was. A lookup that fails only leaves its participant to
// be found by the next message.
func (tx *Tx) readWritten(ctx context.Context) []Participant {
	var out []Participant
	seen := make(map[participantKey]bool, len(tx.written))
	for _, k := range tx.written {
		if seen[k] {
			continue
		}
		seen[k] = true
		if p, err := tx.reader.ActiveParticipantByToken(ctx, k.game, k.token); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// activeParticipants maps a game and a token, in lower case as the table
// holds it, to the active participant. It is guarded by Store.mu.
type activeParticipants struct {
	byToken map[participantKey]Participant
}

type participantKey struct{ game, token string }

// maxActiveKept bounds what activeParticipants holds: the participants of
// some 2,500 games of 25, far more than a host has under way. Past it, it
// starts again.
const maxActiveKept = 1 << 16

func (a *activeParticipants) get(game, token string) (Participant, bool) {
	p, ok := a.byToken[participantKey{game, strings.ToLower(token)}]
	return p, ok
}

func (a *activeParticipants) put(p Participant) {
	if a.byToken == nil || len(a.byToken) >= maxActiveKept {
		a.byToken = map[participantKey]Participant{}
	}
	a.byToken[participantKey{p.Game, strings.ToLower(p.Token)}] = p
}

func (a *activeParticipants) forget(game, token string) {
	delete(a.byToken, participantKey{game, strings.ToLower(token)})
}

// Participants returns every participant of a game, of any status, in the
// order they joined.
func (r reader) Participants(ctx context.Context, game string) ([]Participant, error) {
	rows, err := r.q.QueryContext(ctx, `SELECT `+participantCols+` FROM participants
		WHERE game = ? ORDER BY joined_at, name`, game)
	if err != nil {
		return nil, fmt.Errorf("store: participants of %s: %w", game, err)
	}
	defer rows.Close()
	var ps []Participant
	for rows.Next() {
		p, err := scanParticipant(rows)
		if err != nil {
			return nil, fmt.Errorf("store: participants of %s: %w", game, err)
		}
		ps = append(ps, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: participants of %s: %w", game, err)
	}
	return ps, nil
}

// isConstraint reports whether err is the SQLite constraint violation with
// the given extended code.
func isConstraint(err error, code int) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == code
}
