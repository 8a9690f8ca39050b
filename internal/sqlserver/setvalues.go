package sqlserver

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // named zones where the system has no zoneinfo

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"
)

// Values of system variables that go-mysql-server takes as any string.
// MySQL refuses a time zone or a locale it does not know when the SET
// runs; go-mysql-server stored them, and a time zone it cannot read then
// failed every later statement that asks for the time (1105, "invalid
// time zone"). checkSetValues refuses them as MySQL does:
//
//   - time_zone: SYSTEM, an offset from -13:59 to +14:00 ("+05:30"), or a
//     zone of the time zone database ("Europe/Paris": the system's, or the
//     copy built in where the system has none, which the time functions
//     read too); anything else is 1298;
//   - lc_time_names: one of MySQL's locales, else 1649. Miraj names months
//     and days in English only, so a locale other than en_US is set with
//     a warning (1235) that it is not used.

// checkSetValues refuses the time zones and locales n sets that MySQL
// would refuse, and warns about the locales it accepts and does not use.
func checkSetValues(ctx *sql.Context, n *plan.Set) error {
	checked := func(name string) bool { return name == "time_zone" || name == "lc_time_names" }
	return eachStringSet(ctx, n, checked, func(name, s string) error {
		if name == "time_zone" {
			if !knownTimeZone(s) {
				return mysql.NewSQLError(1298, "HY000", "Unknown or incorrect time zone: '%s'", s)
			}
			return nil
		}
		if !mysqlLocales[strings.ToLower(s)] {
			return mysql.NewSQLError(1649, "HY000", "Unknown locale: '%s'", s)
		}
		if !strings.EqualFold(s, "en_US") {
			ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: mysql.ERNotSupportedYet,
				Message: fmt.Sprintf("lc_time_names is set and not used: Miraj names months and days in English (en_US) only, not in %s", s)})
		}
		return nil
	})
}

// tzOffsetRE is a time zone written as an offset from UTC, as MySQL and
// go-mysql-server's time functions read it.
var tzOffsetRE = regexp.MustCompile(`^([+-])(\d{2}):(\d{2})$`)

// knownTimeZone reports whether s is a time zone MySQL and go-mysql-server's
// time functions take: SYSTEM, an offset within MySQL's range (-13:59 to
// +14:00), or a name of the time zone database.
func knownTimeZone(s string) bool {
	if strings.EqualFold(s, "SYSTEM") {
		return true
	}
	if m := tzOffsetRE.FindStringSubmatch(s); m != nil {
		h, _ := strconv.Atoi(m[2])
		min, _ := strconv.Atoi(m[3])
		if min > 59 {
			return false
		}
		if m[1] == "+" {
			return h < 14 || h == 14 && min == 0
		}
		return h <= 13
	}
	if s == "" || strings.EqualFold(s, "local") {
		return false
	}
	_, err := time.LoadLocation(s)
	return err == nil
}

// mysqlLocales are the values of lc_time_names MySQL 8 takes (MySQL
// Server Locale Support), in lower case.
var mysqlLocales = func() map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Fields(`
		ar_AE ar_BH ar_DZ ar_EG ar_IN ar_IQ ar_JO ar_KW ar_LB ar_LY ar_MA ar_OM
		ar_QA ar_SA ar_SD ar_SY ar_TN ar_YE be_BY bg_BG ca_ES cs_CZ da_DK de_AT
		de_BE de_CH de_DE de_LU el_GR en_AU en_CA en_GB en_IN en_NZ en_PH en_US
		en_ZA en_ZW es_AR es_BO es_CL es_CO es_CR es_DO es_EC es_ES es_GT es_HN
		es_MX es_NI es_PA es_PE es_PR es_PY es_SV es_US es_UY es_VE et_EE eu_ES
		fi_FI fo_FO fr_BE fr_CA fr_CH fr_FR fr_LU gl_ES gu_IN he_IL hi_IN hr_HR
		hu_HU id_ID is_IS it_CH it_IT ja_JP ko_KR lt_LT lv_LV mk_MK mn_MN ms_MY
		nb_NO nl_BE nl_NL no_NO pl_PL pt_BR pt_PT rm_CH ro_RO ru_RU ru_UA sk_SK
		sl_SI sq_AL sr_RS sv_FI sv_SE ta_IN te_IN th_TH tr_TR uk_UA ur_PK vi_VN
		zh_CN zh_HK zh_TW`) {
		m[strings.ToLower(l)] = true
	}
	return m
}()
